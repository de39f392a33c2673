// Entry point: who is calling (and whether the server runs in development mode), then a small
// hash router: #/chat[/<session>], #/trace[/<session>[/call/<seq>]], #/studio[/agent|skill/<name>].
import { ApiError, getJSON } from "./api.js";
import { renderChat } from "./chat.js";
import { identityForm, useStoredIdentity } from "./devidentity.js";
import { PATHS } from "./paths.js";
import { renderStudio } from "./studio.js";
import { renderTrace } from "./trace.js";
import { el, replace } from "./util.js";

const ctx = { me: null, sessions: [] };

async function whoami() {
  try {
    ctx.me = await getJSON(PATHS.whoami());
  } catch (err) {
    ctx.me = null;
    if (err instanceof ApiError && err.status === 401) {
      throw new Error("Not signed in: this server accepts only requests signed by its gateway. " +
        "Open the console through the gateway (or start the server in development mode).");
    }
    throw err;
  }
  // development mode: act as the identity this browser picked (asked again under it)
  if (ctx.me.dev_mode && useStoredIdentity()) ctx.me = await getJSON(PATHS.whoami());
  const who = ctx.me.platform || {};
  const name = who.name || who.userId || "unknown";
  document.getElementById("who").textContent = `${name}${who.organName ? " · " + who.organName : ""}`;
  const banner = document.getElementById("devmode");
  if (ctx.me.dev_mode) {
    document.getElementById("devmode-who").textContent = JSON.stringify(who);
    banner.append(" ", identityForm(who));
    banner.hidden = false;
    document.body.classList.add("dev");
  }
}

export async function refreshSessions() {
  const data = await getJSON(PATHS.sessions());
  ctx.sessions = Array.isArray(data) ? data : (data.sessions || []);
  return ctx.sessions;
}

async function route() {
  const view = document.getElementById("view");
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const name = parts.shift() || "chat";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === name);
  try {
    if (!ctx.me) await whoami();
    if (name === "studio") await renderStudio(view, parts);
    else if (name === "trace") await renderTrace(view, parts, await refreshSessions());
    else await renderChat(view, parts, ctx, refreshSessions);
  } catch (err) {
    const text = err instanceof ApiError && err.code ? `${err.code}: ${err.message}` : (err.message || String(err));
    replace(view, el("div", { class: "panel msg error", role: "alert" }, text));
  }
  view.dataset.ready = location.hash || "#/chat";
}

window.addEventListener("hashchange", route);
route();
