// Question cards: APPROVAL (the write's tool, its masked parameter summary, approve / reject,
// expiry), VERIFY ("did this take effect?") and FOLLOW_UP (answered inline). A decided card
// says who decided and when.
import { el, when } from "./util.js";

const TITLES = { APPROVAL: "Approval needed", VERIFY: "Did this take effect?", FOLLOW_UP: "The agent asks" };

/** A card for an interrupt (docs/API.md section 2). `actions.decide(payload, status)` answers it;
 * without actions (or with `answered`, the node.resumed event) the card is shown as decided. */
export function drawCard(interrupt, actions, answered, ctx) {
  const meta = interrupt.metadata || {};
  const kind = meta.kind || "FOLLOW_UP";
  const open = actions && !answered;
  const card = el("div", { class: `card ${kind.toLowerCase().replace("_", "")}${open ? " open" : ""}`, "data-kind": kind,
    "data-interrupt": interrupt.id, role: "group", "aria-label": TITLES[kind] },
    el("h4", {}, TITLES[kind], meta.tool ? [": ", el("code", { class: "card-tool" }, meta.tool)] : null));
  card.append(el("pre", { class: "summary" }, interrupt.message || ""));
  // a list of the write (passengers, lines…) as a table: one row per item, so whose date of
  // birth is whose stays readable
  for (const t of meta.tables || []) card.append(itemTable(t));
  const facts = [];
  if (meta.node) facts.push(`task ${meta.task} · node ${meta.node}`);
  if (meta.evidence) facts.push(`evidence ${meta.evidence}`);
  if (meta.expected_fields && meta.expected_fields.length) facts.push(`fields: ${meta.expected_fields.join(", ")}`);
  if (interrupt.expiresAt) {
    // after the expiry a confirmation is not executed: the runtime asks again (a new card)
    const past = Date.parse(interrupt.expiresAt) < Date.now();
    facts.push(past ? `expired ${when(interrupt.expiresAt)}: approving asks again` : `expires ${when(interrupt.expiresAt)}`);
  }
  if (facts.length) card.append(el("div", { class: "meta" }, facts.join(" · ")));
  if (open) card.append(controls(kind, meta, actions));
  if (answered) card.append(decidedLine(kind, answered, ctx));
  return card;
}

function itemTable(t) {
  return el("table", { class: "items", "data-list": t.list },
    el("caption", {}, t.list),
    el("thead", {}, el("tr", {}, el("th", {}, "#"), t.columns.map((c) => el("th", {}, c)))),
    el("tbody", {}, t.rows.map((row, i) => el("tr", {}, el("td", {}, String(i + 1)), row.map((v) => el("td", {}, v))))));
}

function controls(kind, meta, actions) {
  const lock = (box) => { for (const b of box.querySelectorAll("button, input")) b.disabled = true; };
  if (kind === "APPROVAL") {
    const box = el("div", { class: "actions" });
    const decide = (decision) => () => { lock(box); actions.decide({ decision, digest: meta.digest }); };
    box.append(
      el("button", { class: "primary", "data-action": "approve", onclick: decide("CONFIRM") }, "Approve"),
      el("button", { class: "danger", "data-action": "reject", onclick: decide("REJECT") }, "Reject"),
      el("button", { "data-action": "cancel", onclick: () => { lock(box); actions.decide(null, "cancelled"); } }, "Cancel task"));
    return box;
  }
  if (kind === "VERIFY") {
    const box = el("div", { class: "actions" });
    const decide = (verified) => () => { lock(box); actions.decide({ verified }); };
    box.append(
      el("button", { class: "primary", "data-action": "verified", onclick: decide(true) }, "Yes, it took effect"),
      el("button", { class: "danger", "data-action": "not-verified", onclick: decide(false) }, "No, it did not"));
    return box;
  }
  const input = el("input", { type: "text", class: "followup-input", placeholder: "Your answer", autocomplete: "off" });
  const form = el("form", { class: "actions followup-form", onsubmit: (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    lock(form);
    actions.decide({ text });
  } }, input, el("button", { class: "primary", "data-action": "answer", type: "submit" }, "Answer"));
  return form;
}

/** "Approved by alice at …": from a node.resumed event (or the same shape built in the page). */
export function decidedLine(kind, resumed, ctx) {
  const answer = resumed.answer;
  let text, tone = "ok";
  if (kind === "APPROVAL") {
    const decision = answer && answer.decision;
    text = { CONFIRM: "Approved", REJECT: "Rejected", CANCEL: "Cancelled" }[decision] || "Answered";
    tone = decision === "CONFIRM" ? "ok" : "bad";
  } else if (kind === "VERIFY") {
    const verified = answer && answer.verified;
    text = verified ? "Confirmed it took effect" : "Confirmed it did not take effect";
    tone = verified ? "ok" : "bad";
  } else {
    const said = typeof answer === "string" ? answer : (answer && answer.text) || "";
    text = `Answered “${said}”`;
  }
  const who = (answer && typeof answer === "object" && answer.approver) || resumed._by || null;
  const at = (answer && typeof answer === "object" && answer.decided_at) || resumed._at || resumed.ts || resumed.time || null;
  const name = who ? (who.name || (who.userId !== undefined ? `user ${who.userId}` : JSON.stringify(who))) : null;
  return el("div", { class: `decided ${tone}`, "data-decision": text },
    text, name ? ` by ${name}` : "", at ? ` at ${when(at)}` : "");
}
