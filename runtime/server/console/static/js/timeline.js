// The trace (docs/reference/scenarios.md events) turned into per-turn timelines: nodes, tool calls with their
// verdicts, settlements attached to the write they settle. Pure data, no DOM: trace.js draws it.
import { when } from "./util.js";

const CALL_FAILURES = new Set(["TOOL_TIMEOUT", "TOOL_IO_ERROR", "MCP_RPC_ERROR", "TOOL_UNREACHABLE",
  "MCP_TOOL_ERROR", "MCP_INVALID_PARAMS"]);

/** The verdict of one tool.call event: {kind, label, tone}. kind is one of accepted, refused,
 * approval, business_failed, call_failed, unknown, replayed. */
export function verdict(call) {
  if (call.replayed) return { kind: "replayed", label: "replayed", tone: "info" };
  if (call.ok) return { kind: "accepted", label: "accepted", tone: "ok" };
  if (call.error === "APPROVAL_REQUIRED") return { kind: "approval", label: "needs approval", tone: "warn" };
  if (call.error === "TOOL_BUSINESS_FAILED") return { kind: "business_failed", label: "business failure", tone: "bad" };
  if (call.status === "UNKNOWN") return { kind: "unknown", label: "outcome unknown", tone: "warn" };
  if (CALL_FAILURES.has(call.error)) return { kind: "call_failed", label: "call failed", tone: "bad" };
  return { kind: "refused", label: "refused", tone: "bad" };
}

/** True for a call the chain or gate refused (the "refusals" filter): any spec rejection. */
export function isRefusal(call) {
  const k = verdict(call).kind;
  return k === "refused" || k === "approval";
}

/** Group events by turn: [{turn, started, items: [...], reply}]; items are
 * {type: "call", event, verdict, settled?} | {type: "event", event}. */
export function buildTimeline(events) {
  const turns = new Map();
  const byEvidence = new Map();
  const ordered = [...events].sort((a, b) => a.seq - b.seq);
  for (const ev of ordered) {
    const key = ev.turn ?? 0;
    if (!turns.has(key)) turns.set(key, { turn: key, started: null, reply: null, items: [] });
    const turn = turns.get(key);
    if (ev.type === "turn.started") { turn.started = ev; continue; }
    if (ev.type === "turn.reply") { turn.reply = ev; continue; }
    if (ev.type === "mcp.invoked") continue; // the call's own row says it ran; kept in the raw trace
    if (ev.type === "tool.call") {
      const item = { type: "call", event: ev, verdict: verdict(ev), settled: null };
      if (ev.evidence) {
        // an idempotent replay returns an earlier evidence id: the settlement belongs to the first
        if (!byEvidence.has(ev.evidence)) byEvidence.set(ev.evidence, item);
      }
      turn.items.push(item);
      continue;
    }
    if (ev.type === "write.settled") {
      const call = byEvidence.get(ev.evidence);
      if (call) call.settled = ev;
      if (call && businessFailedWrite(call)) {  // SUCCESS here is the outcome, not the business verdict
        turn.items.push({ type: "event", event: { ...ev, business_failed: true } });
        continue;
      }
    }
    turn.items.push({ type: "event", event: ev });
  }
  return [...turns.values()].sort((a, b) => a.turn - b.turn);
}

/** A write the system answered (settled SUCCESS: its effect is known, nothing is uncertain or
 * sent again) with an answer the contract judges a business failure, e.g. a 409 conflict. */
export function businessFailedWrite(item) {
  return Boolean(item.settled && item.settled.status === "SUCCESS" && item.event.business_ok === false);
}

/** What "settled SUCCESS" means beside a business failure, in one sentence. */
export const BUSINESS_FAILED_SETTLED = "its effect is known (the system answered: nothing is uncertain, " +
  "nothing is sent again); the business verdict is failure";

/** A one-line description of a non-call event. */
export function describe(ev) {
  switch (ev.type) {
    case "agent.routed": return `routed to agent ${ev.agent} (${ev.via})`;
    case "task.planned": return `task ${ev.task} planned (${ev.via}): ` +
      (ev.nodes || []).map((n) => `${n.node} ${n.skill}${n.deps && n.deps.length ? " after " + n.deps.join(", ") : ""}`).join("; ");
    case "node.started": return `node ${ev.node} started: ${ev.skill}${ev.target ? " → " + ev.target : ""} (${ev.kind})`;
    case "node.skipped": return `node ${ev.node} skipped: ${ev.reason}`;
    case "node.suspended": return `node ${ev.node} waits: ${ev.kind}${ev.tool ? " for " + ev.tool : ""}`;
    case "node.resumed": return `node ${ev.node} resumed (${ev.kind}): ${answerText(ev.answer)}`;
    case "node.finished": return `node ${ev.node} ${ev.state}${ev.reason ? ": " + ev.reason : ""}`;
    case "task.finished": return `task ${ev.task} ${ev.state}${ev.reason ? ": " + ev.reason : ""}`;
    case "write.settled": return `write ${ev.evidence} (${ev.tool}) settled ${ev.status} via ${ev.via}` +
      (ev.business_failed ? `: ${BUSINESS_FAILED_SETTLED}` : "");
    case "output.set": return `output ${ev.key} = ${JSON.stringify(ev.value)} (${ev.source})`;
    case "skill.rejected": return `skill ${ev.skill} rejected at load: ` + (ev.diagnostics || []).map((d) => d.code).join(", ");
    case "error": return `error: ${ev.message}`;
    case "audit.approval": return `audit: approval ${ev.decision} by ${actor(ev.who)} at ${when(ev.at)}`;
    case "audit.settlement": return `audit: write ${ev.evidence} ${ev.status} via ${ev.via} by ${actor(ev.who)} at ${when(ev.at)}`;
    case "studio.stale": return `studio stale: ${ev.error || ""}`;
    default: return ev.type;
  }
}

/** What the call's observation carried back (the response data), when it is JSON. */
export function observation(call) {
  if (call.extracted !== undefined) return call.extracted;
  try {
    const parsed = JSON.parse(call.message);
    return parsed && typeof parsed === "object" && "data" in parsed ? parsed.data : parsed;
  } catch {
    return null;
  }
}

/** Who acted, from an audit event's `who` ({actor, userId, …}). */
function actor(who) {
  if (!who) return "?";
  return who.actor === "runtime" ? "the runtime" : `user ${who.userId ?? "?"}`;
}

/** A decision, verification or follow-up answer in a few words (digests left out: they are opaque). */
export function answerText(answer) {
  if (answer === undefined || answer === null) return "";
  if (typeof answer === "string") return `“${answer}”`;
  if (answer.decision) {
    const who = answer.approver ? ` by ${answer.approver.name || answer.approver.userId}` : "";
    return `${answer.decision}${who}${answer.decided_at ? " at " + when(answer.decided_at) : ""}`;
  }
  if (typeof answer.verified === "boolean") return answer.verified ? "it took effect" : "it did not take effect";
  if (typeof answer.text === "string") return `“${answer.text}”`;
  return JSON.stringify(answer);
}
