// Development mode only: who this browser acts as. A server started with --dev-insecure takes the
// caller from an unsigned X-Skillc-Identity header (or its --dev-identity default); this module
// keeps the identity a person picked in localStorage and draws the banner's "act as" form. In
// production the gateway signs the identity and none of this is used.
import { setDevIdentity } from "./api.js";
import { el, replace } from "./util.js";

const KEY = "skillc.devIdentity";

/** The identity this browser picked earlier (an object with a userId), or null. */
export function storedIdentity() {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) || "null");
    return value && typeof value === "object" && !Array.isArray(value) && value.userId !== undefined ? value : null;
  } catch {
    return null;
  }
}

/** Send the stored identity with every request from now on (true when there is one). */
export function useStoredIdentity() {
  const who = storedIdentity();
  setDevIdentity(who);
  return who !== null;
}

/** What is wrong with a typed identity, or null when it can be used. */
export function problem(text) {
  let value;
  try { value = JSON.parse(text); } catch { return "not JSON: write an object such as {\"userId\": 7, \"organId\": 9}"; }
  if (!value || typeof value !== "object" || Array.isArray(value)) return "an identity is a JSON object";
  if (value.userId === undefined || value.userId === null || value.userId === "") return "an identity needs a userId";
  return null;
}

/** The banner's "act as…" control: a JSON field, Apply (reloads as that caller) and Reset. */
export function identityForm(current) {
  const box = el("span", { class: "dev-identity" });
  const open = () => {
    const input = el("input", { id: "dev-identity-input", class: "mono", value: JSON.stringify(current),
      "aria-label": "Identity to act as (JSON)", spellcheck: "false" });
    const error = el("span", { id: "dev-identity-error", class: "dev-identity-error", role: "alert" });
    const apply = () => {
      const why = problem(input.value);
      if (why) { error.textContent = why; return; }
      localStorage.setItem(KEY, JSON.stringify(JSON.parse(input.value)));
      location.reload();
    };
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });
    replace(box, input,
      el("button", { id: "dev-identity-apply", type: "button", onclick: apply }, "Apply"),
      el("button", { id: "dev-identity-reset", type: "button", title: "Act as the server's default identity",
        onclick: () => { localStorage.removeItem(KEY); location.reload(); } }, "Reset"),
      error);
    input.focus();
  };
  replace(box, el("button", { id: "dev-identity-edit", type: "button", onclick: open }, "Act as…"));
  return box;
}
