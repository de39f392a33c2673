// The trace view: a session's turns as timelines of nodes and tool calls, each call with its
// verdict; "refusals only" filter; #/trace/<session>/call/<seq> deep-links one call's detail.
import { getJSON, getTrace } from "./api.js";
import { PATHS } from "./paths.js";
import { BUSINESS_FAILED_SETTLED, answerText, buildTimeline, businessFailedWrite, describe, isRefusal, observation } from "./timeline.js";
import { el, replace, show } from "./util.js";

const SETTLED_WORDS = { call: "settled", verify: "settled by verify", user: "settled by the user" };

/** #/trace/<session>[/call/<seq>]; `sessions` lists the caller's sessions for the picker. */
export async function renderTrace(root, parts, sessions) {
  const [sid, what, seq] = parts;
  if (!sid) {
    replace(root, el("div", { class: "panel" }, el("h2", {}, "Traces"),
      sessions.length ? el("ul", { class: "sessions" }, sessions.map((s) =>
        el("li", {}, el("a", { href: `#/trace/${encodeURIComponent(s.id)}` }, s.id)))) :
        el("p", { class: "muted" }, "No sessions yet: start one in Chat.")));
    return;
  }
  const [events, evidence] = await Promise.all([getTrace(PATHS.trace(sid)), getJSON(PATHS.evidence(sid))]);
  const byId = new Map(evidence.evidence.map((e) => [e.id, e]));
  const turns = buildTimeline(events);
  const selected = what === "call" ? Number(seq) : null;
  const onlyRefusals = sessionStorage.getItem("skillc.refusalsOnly") === "1";
  const detail = el("aside", { class: "panel detail", id: "call-detail" });
  const list = el("div", { class: "turns" });

  const draw = (refusals) => {
    replace(list, turns.map((t) => drawTurn(sid, t, refusals, selected, byId)));
  };
  const filter = el("input", { type: "checkbox", id: "refusals-only", checked: onlyRefusals, onchange: (e) => {
    sessionStorage.setItem("skillc.refusalsOnly", e.target.checked ? "1" : "0");
    draw(e.target.checked);
  } });
  draw(onlyRefusals);
  const call = selected !== null ? events.find((e) => e.seq === selected && e.type === "tool.call") : null;
  if (call) {
    const item = turns.flatMap((t) => t.items).find((i) => i.type === "call" && i.event.seq === selected);
    drawDetail(detail, item, byId.get(item.event.evidence));
  } else {
    replace(detail, el("p", { class: "muted" }, "Select a tool call to see its detail (the address bar then links to it)."));
  }
  replace(root,
    el("div", { class: "toolbar" },
      el("h2", { class: "flush" }, "Trace ", el("span", { class: "badge plain mono" }, sid)),
      el("label", {}, filter, " refusals only"),
      el("button", { id: "trace-refresh", title: "Read the trace again (a run may still be adding to it)",
        onclick: () => renderTrace(root, parts, sessions) }, "Refresh"),
      el("a", { href: `#/chat/${encodeURIComponent(sid)}` }, "open in chat"),
      el("a", { href: PATHS.trace(sid), download: `${sid}.jsonl` }, "raw JSON lines")),
    el("div", { class: "trace-grid" }, list, detail));
  if (call) {
    const row = root.querySelector(`li[data-seq="${selected}"]`);
    if (row) row.scrollIntoView({ block: "center" });
  }
}

function drawTurn(sid, turn, refusalsOnly, selected, byId) {
  const start = turn.started;
  const said = start ? (start.message !== undefined ? `“${start.message}”` : `answer: ${answerText(start.answer)}`) : "";
  const items = turn.items.filter((i) => !refusalsOnly || (i.type === "call" && isRefusal(i.event)));
  if (refusalsOnly && !items.length) return null;
  return el("section", { class: "turn panel", "data-turn": turn.turn },
    el("h3", {}, `Turn ${turn.turn} `, el("span", { class: "muted" }, said)),
    el("ol", { class: "timeline" }, items.map((i) => i.type === "call" ? callRow(sid, i, selected, byId.get(i.event.evidence)) : eventRow(i.event))),
    turn.reply && !refusalsOnly ? el("div", { class: "muted gap-top-s" },
      turn.reply.suspended ? "Waiting: " : "Reply: ", el("span", { class: "reply-text" }, turn.reply.text)) : null);
}

function eventRow(ev) {
  const node = ev.type.startsWith("node.") || ev.type.startsWith("task.");
  const audit = ev.type.startsWith("audit.");
  return el("li", { class: `ev ${node ? "ev-node" : ""} ${audit ? "audit" : ""} ${ev.type === "write.settled" ? "settled" : ""}`,
    "data-type": ev.type, "data-seq": ev.seq },
    el("span", { class: "what" }, describe(ev)));
}

function callRow(sid, item, selected, evidence) {
  const ev = item.event, v = item.verdict;
  const href = `#/trace/${encodeURIComponent(sid)}/call/${ev.seq}`;
  const classes = ["call", v.kind === "refused" || v.kind === "approval" ? "refused" : "", item.settled ? "settled" : "",
    ev.seq === selected ? "selected" : ""].join(" ");
  return el("li", { class: classes, "data-seq": ev.seq, "data-verdict": v.kind, onclick: () => { location.hash = href; } },
    el("span", { class: "what" },
      el("a", { href, class: "mono" }, ev.tool),
      ev.builtin ? el("span", { class: "badge plain" }, "builtin") : null,
      el("span", { class: `badge ${v.tone} verdict` }, v.label),
      ev.error ? el("span", { class: "badge bad mono" }, ev.error) : null,
      ev.code ? el("span", { class: "mono muted" }, ev.code) : null,
      ev.evidence ? el("span", { class: "badge info mono" }, ev.evidence) : null,
      item.settled ? el("span", { class: `badge ${settledTone(item)} settle`, title: businessFailedWrite(item) ? BUSINESS_FAILED_SETTLED : null },
        `${SETTLED_WORDS[item.settled.via] || "settled"}: ${item.settled.status}`) : null),
    businessFailedWrite(item) ? el("div", { class: "hint meaning" }, `settled ${item.settled.status}: ${BUSINESS_FAILED_SETTLED}`) : null,
    (v.kind === "business_failed" || v.kind === "call_failed") && ev.message ? el("div", { class: "hint said" },
      "the system said: ", el("span", { class: "said-text" }, clip(show(ev.message), 300))) : null,
    ev.next && !ev.ok ? el("div", { class: "hint" }, "hint: ", ev.next) : null,
    evidence && Object.keys(evidence.values).length ? el("div", { class: "hint extracted" },
      "extracted: ", Object.entries(evidence.values).map(([k, v]) => `${k} = ${clip(JSON.stringify(v), 80)}`).join("; ")) : null);
}

/** ok for a settled success, warn when the success is only the outcome of a business failure. */
function settledTone(item) {
  if (item.settled.status !== "SUCCESS") return "bad";
  return businessFailedWrite(item) ? "warn" : "ok";
}

function clip(text, n) {
  return text && text.length > n ? text.slice(0, n - 1) + "…" : text;
}

function drawDetail(root, item, evidence) {
  const ev = item.event, v = item.verdict;
  const rows = [
    ["tool", el("code", {}, ev.tool)], ["verdict", el("span", { class: `badge ${v.tone}` }, v.label)],
    ["error", ev.error ? el("code", { class: "detail-error" }, ev.error) : "—"], ["code", ev.code || "—"],
    ["hint", ev.next || "—"], ["node", `${ev.task || ""} / ${ev.node || ""}`], ["evidence", ev.evidence || "—"],
    ["status", ev.status || "—"], ["business", ev.business_ok === null || ev.business_ok === undefined ? "—" : String(ev.business_ok)],
    ["replayed", ev.replayed ? "yes" : "no"],
    ["settled", item.settled ? `${item.settled.status} via ${item.settled.via} (event ${item.settled.seq})` +
      (businessFailedWrite(item) ? `: ${BUSINESS_FAILED_SETTLED}` : "") : "—"],
  ];
  const data = observation(ev);
  const extracted = evidence ? [
    el("h4", {}, "Extracted values"), el("pre", { class: "extracted-json" }, JSON.stringify(evidence.values, null, 2)),
    evidence.entities.length ? [el("h4", {}, "Entities"), el("pre", {}, JSON.stringify(evidence.entities, null, 2))] : null,
  ] : null;
  replace(root,
    el("h3", {}, `Call #${ev.seq}`),
    el("dl", {}, rows.map(([k, val]) => [el("dt", {}, k), el("dd", {}, val)])),
    el("h4", {}, "Arguments (as bound; sensitive values masked)"), el("pre", { class: "args-json" }, JSON.stringify(ev.args, null, 2)),
    extracted,
    el("h4", {}, data !== null && data !== undefined ? "Response data" : "Observation"),
    el("pre", { class: "observation" }, data !== null && data !== undefined ? JSON.stringify(data, null, 2) : show(ev.message)));
}
