// The chat view: talk to the agents over AG-UI (POST /agui), live progress labels, the reply,
// and the session's pending question as a card (approve / reject a write, did it take effect?,
// a follow-up answered inline). Earlier turns are drawn from the session's trace.
import { ApiError, getJSON, getTrace, postJSON, runAgent } from "./api.js";
import { drawCard, decidedLine } from "./cards.js";
import { PATHS } from "./paths.js";
import { el, newId, replace } from "./util.js";

let labels = null; // tool → progress label, from the studio (drawn history has no live events)

async function toolLabels() {
  if (labels) return labels;
  labels = {};
  try {
    const studio = await getJSON(PATHS.studio());
    for (const s of studio.skills) Object.assign(labels, s.tool_labels || {});
  } catch { /* labels are a nicety: tool names do */ }
  return labels;
}

/** #/chat or #/chat/<session>. */
export async function renderChat(root, parts, ctx, refreshSessions) {
  const sid = parts[0] || null;
  const [sessions, studio] = await Promise.all([refreshSessions(), getJSON(PATHS.studio()), toolLabels()]);
  const chat = new Chat(root, sid, ctx, studio, refreshSessions);
  chat.layout(sessions);
  if (sid) await chat.load();
  else chat.empty();
}

class Chat {
  constructor(root, sid, ctx, studio, refreshSessions) {
    Object.assign(this, { root, sid, ctx, studio, refreshSessions });
    this.interrupt = null;
    this.busy = false;
    this.loads = 0; // bumped by every load and run; a load draws only if nothing came after it
  }

  layout(sessions) {
    this.list = el("ul", { class: "sessions", id: "session-list" });
    this.drawSessions(sessions);
    this.agent = el("select", { id: "agent-pick", title: "Which agent answers a new task" },
      el("option", { value: "" }, "Let routing pick"),
      this.studio.agents.map((a) => el("option", { value: a.agent_code }, `${a.agent_name} (${a.agent_code})`)));
    const saved = sessionStorage.getItem("skillc.agent");
    if (saved) this.agent.value = saved;
    this.agent.addEventListener("change", () => sessionStorage.setItem("skillc.agent", this.agent.value));
    this.log = el("div", { class: "log", id: "chat-log" });
    this.input = el("input", { type: "text", id: "chat-input", placeholder: "Message your agents…", autocomplete: "off" });
    this.hint = el("span", { class: "hint", id: "chat-hint" });
    this.sendButton = el("button", { class: "primary", id: "chat-send", type: "submit" }, "Send");
    const form = el("form", { class: "composer", onsubmit: (e) => { e.preventDefault(); this.send(); } },
      this.input, this.hint, this.sendButton);
    const side = el("aside", { class: "panel" },
      el("button", { id: "new-session", onclick: () => this.newSession() }, "New conversation"),
      el("label", { class: "field gap-top" }, el("span", {}, "Agent for a new task"), this.agent),
      el("h3", {}, "Your sessions"), this.list,
      this.taskBox = el("div", { class: "task-box", id: "task-box" }));
    this.head = el("div", { class: "toolbar" });
    this.drawHead();
    replace(this.root, el("div", { class: "layout" }, side,
      el("section", { class: "panel chat" }, this.head, this.log, form)));
  }

  drawHead() {
    replace(this.head,
      el("h2", { class: "flush" }, "Chat ", this.sid ? el("span", { class: "badge plain mono", id: "session-id" }, this.sid) : null),
      this.sid ? el("a", { href: `#/trace/${encodeURIComponent(this.sid)}`, id: "open-trace" }, "trace") : null);
  }

  /** The session's current task graph (nodes and their states), from a STATE_SNAPSHOT or the
   * state route. */
  drawTask(state) {
    const task = state && state.active_task;
    if (!task) { replace(this.taskBox); return; }
    const tone = { DONE: "ok", FAILED: "bad", CANCELLED: "bad", SUSPENDED: "warn", RUNNING: "info" };
    replace(this.taskBox,
      el("h3", {}, `Task ${task.id} `, el("span", { class: `badge ${tone[task.state] || "plain"}` }, task.state)),
      el("div", { class: "muted" }, `agent ${task.agent}`),
      el("ul", { class: "task-nodes" }, Object.entries(task.nodes).map(([id, n]) => el("li", { "data-node": id, "data-state": n.state },
        el("code", {}, id), " ", n.skill, " ", el("span", { class: `badge ${tone[n.state] || "plain"}` }, n.state)))));
  }

  drawSessions(sessions) {
    replace(this.list, sessions.length ? sessions.map((s) => el("li", {},
      el("a", { href: `#/chat/${encodeURIComponent(s.id)}`, class: s.id === this.sid ? "current" : "" },
        s.id, s.pending ? el("span", { class: "badge warn gap-left" }, s.pending) : null))) :
      el("li", { class: "muted" }, "none yet"));
  }

  empty() {
    replace(this.log, el("p", { class: "muted" }, "Write a message to start a conversation."));
  }

  async newSession() {
    try {
      const made = await postJSON(PATHS.sessions(), {});
      location.hash = `#/chat/${encodeURIComponent(made.id)}`;
    } catch (err) {
      this.log.append(el("div", { class: "msg error", role: "alert" }, errorText(err)));
    }
  }

  /** Draw the conversation so far from the trace, then the pending question. */
  async load() {
    // A run started while this load was fetching (a message sent right after opening the
    // session) has drawn newer things than this load read: it must not wipe them.
    const token = ++this.loads;
    const [events, pending, state] = await Promise.all([getTrace(PATHS.trace(this.sid)), getJSON(PATHS.pending(this.sid)),
      getJSON(PATHS.state(this.sid)), toolLabels()]);
    if (token !== this.loads || this.busy) return;
    this.interrupt = null;
    replace(this.log);
    this.drawTask(state);
    const resumed = events.filter((e) => e.type === "node.resumed");
    const turns = new Map();
    for (const ev of events) {
      if (!turns.has(ev.turn)) turns.set(ev.turn, []);
      turns.get(ev.turn).push(ev);
    }
    for (const [, evs] of [...turns.entries()].sort((a, b) => a[0] - b[0])) {
      const start = evs.find((e) => e.type === "turn.started");
      if (start && start.message !== undefined) this.log.append(el("div", { class: "msg user" }, start.message));
      for (const ev of evs) {
        if (ev.type === "agent.routed") this.log.append(el("div", { class: "progress done routed", "data-agent": ev.agent }, `agent ${ev.agent} (${ev.via})`));
        if (ev.type === "tool.call" && (!ev.builtin || !ev.ok)) this.log.append(progressLine(ev));
      }
      const reply = evs.find((e) => e.type === "turn.reply");
      if (!reply) continue;
      const suspended = [...evs].reverse().find((e) => e.type === "node.suspended");
      if (reply.suspended && suspended) {
        let answer = resumed.find((r) => r.seq > suspended.seq && r.node === suspended.node && r.kind === suspended.kind);
        if (answer) {
          // who and when: the approval carries its approver; otherwise the audit event after it
          const audit = events.find((e) => e.seq > answer.seq && e.type.startsWith("audit.") && e.node === answer.node && e.who);
          if (audit) answer = { ...answer, _by: audit.who, _at: audit.at };
        }
        const live = !answer && pending.interrupt && pending.interrupt.metadata && pending.interrupt.metadata.node === suspended.node;
        this.log.append(drawCard(live ? pending.interrupt : fromEvent(suspended), live ? this.actions() : null, answer || null, this.ctx));
        if (live) this.interrupt = pending.interrupt;
      } else {
        this.log.append(el("div", { class: "msg agent" }, reply.text));
      }
    }
    if (!this.interrupt && pending.interrupt) { // waiting, but the suspending turn is not in the trace (e.g. trimmed)
      this.interrupt = pending.interrupt;
      this.log.append(drawCard(pending.interrupt, this.actions(), null, this.ctx));
    }
    this.composerState();
    this.log.scrollTop = this.log.scrollHeight;
  }

  actions() {
    return { decide: (payload, status) => this.resume(payload, status) };
  }

  composerState() {
    const kind = this.interrupt && this.interrupt.metadata && this.interrupt.metadata.kind;
    const deciding = kind === "APPROVAL" || kind === "VERIFY";
    this.input.disabled = this.busy || deciding;
    this.sendButton.disabled = this.busy || deciding;
    this.input.placeholder = kind === "FOLLOW_UP" ? "Answer the question above…" : "Message your agents…";
    this.hint.textContent = deciding ? "Decide on the card above first." : (this.busy ? "Working…" : "");
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.busy) return;
    if (!this.sid) {
      let made;
      try {
        made = await postJSON(PATHS.sessions(), {});
      } catch (err) {
        this.log.append(el("div", { class: "msg error", role: "alert" }, errorText(err)));
        return;
      }
      this.sid = made.id;
      history.replaceState(null, "", `#/chat/${encodeURIComponent(made.id)}`);
      replace(this.log);
      this.drawHead();
    }
    this.input.value = "";
    this.log.append(el("div", { class: "msg user" }, text));
    const kind = this.interrupt && this.interrupt.metadata && this.interrupt.metadata.kind;
    if (kind === "FOLLOW_UP") {
      // the follow-up card is answered: a plain message is its answer (docs/API.md section 3)
      return this.run({ resume: [{ interruptId: this.interrupt.id, status: "resolved", payload: { text } }] }, text);
    }
    const input = { messages: [{ id: newId("msg"), role: "user", content: text }] };
    if (this.agent.value) input.forwardedProps = { agent: this.agent.value };
    return this.run(input);
  }

  async resume(payload, status = "resolved") {
    return this.run({ resume: [{ interruptId: this.interrupt.id, status, payload }] });
  }

  /** One AG-UI run; live progress, the reply or the next question. */
  async run(extra, followUpText) {
    const card = this.log.querySelector(".card.open");
    this.loads++; // a load still fetching is older than this run: it draws nothing (see load)
    this.busy = true;
    this.composerState();
    const progress = new Map(); // tool → its latest progress line
    const calls = new Map(); // toolCallId → progress line
    const names = new Map(); // toolCallId → tool name
    let reply = null, text = "", finished = null, decided = null, refusal = null;
    const input = { threadId: this.sid, runId: newId("run"), state: {}, messages: [], tools: [], context: [], forwardedProps: {}, ...extra };
    try {
      await runAgent(PATHS.agui(), input, (ev) => {
        if (ev.type === "CUSTOM" && ev.name === "skillc.progress") {
          const line = el("div", { class: "progress", "data-tool": ev.value.tool }, ev.value.label);
          progress.set(ev.value.tool, line);
          this.log.append(line);
        } else if (ev.type === "TOOL_CALL_START") {
          // a progress line still open for this tool is this call's (a call refused before it
          // reached the tool has no line of its own yet)
          const line = progress.get(ev.toolCallName);
          if (line && !line.classList.contains("done")) calls.set(ev.toolCallId, line);
          names.set(ev.toolCallId, ev.toolCallName);
        } else if (ev.type === "TOOL_CALL_RESULT") {
          let result = {};
          try { result = JSON.parse(ev.content); } catch { /* not JSON: nothing to say */ }
          const tool = names.get(ev.toolCallId) || "";
          let line = calls.get(ev.toolCallId);
          if (!line && result.ok === false) {
            line = el("div", { class: "progress", "data-tool": tool }, (labels && labels[tool]) || tool);
            this.log.append(line);
          }
          if (line) {
            line.classList.add("done");
            if (result.ok === false) {
              const gated = result.error === "APPROVAL_REQUIRED";
              line.classList.add(gated ? "gated" : "refused");
              line.append(el("span", { class: "verdict-note" }, gated ? " — needs approval" : ` — ${result.error || "failed"}`));
            }
          }
        } else if (ev.type === "STATE_SNAPSHOT") {
          this.drawTask(ev.snapshot);
        } else if (ev.type === "CUSTOM" && ev.name === "skillc.routed") {
          const wanted = extra.forwardedProps && extra.forwardedProps.agent;
          const note = wanted && wanted !== ev.value.agent ? ` (asked for ${wanted})` : "";
          this.log.append(el("div", { class: "progress done routed", "data-agent": ev.value.agent },
            `agent ${ev.value.agent} (${ev.value.via})${note}`));
        } else if (ev.type === "CUSTOM" && ev.name === "skillc.approval") {
          decided = ev.value;
        } else if (ev.type === "TEXT_MESSAGE_START") {
          reply = el("div", { class: "msg agent live" });
        } else if (ev.type === "TEXT_MESSAGE_CONTENT") {
          text += ev.delta;
          if (reply) reply.textContent = text;
        } else if (ev.type === "RUN_FINISHED") {
          finished = ev;
        } else if (ev.type === "RUN_ERROR" && REFUSED_ANSWERS.has(ev.code)) {
          refusal = ev; // the answer did not fit what is pending now: nothing ran
        } else if (ev.type === "RUN_ERROR") {
          this.log.append(el("div", { class: "msg error", role: "alert" }, `Run failed: ${ev.message}`));
        }
        this.log.scrollTop = this.log.scrollHeight;
      });
    } catch (err) {
      refusal = { message: errorText(err) };
    }
    if (refusal) {
      // refused before anything ran (busy session, stale question, changed arguments…): show the
      // server's truth again, then why
      this.busy = false;
      if (this.sid && card) await this.load().catch(() => {});
      const why = refusal.code ? `${refusal.code}: ${refusal.message}` : refusal.message;
      this.log.append(el("div", { class: "msg error", role: "alert" }, why));
      this.composerState();
      return;
    }
    for (const line of progress.values()) line.classList.add("done");
    if (card) closeCard(card, extra.resume && extra.resume[0], decided, followUpText, this.ctx);
    this.interrupt = null;
    const outcome = finished && finished.outcome;
    if (outcome && outcome.type === "interrupt" && outcome.interrupts.length) {
      this.interrupt = outcome.interrupts[0];
      this.log.append(drawCard(this.interrupt, this.actions(), null, this.ctx));
    } else if (reply) {
      this.log.append(reply);
    }
    this.busy = false;
    this.composerState();
    this.log.scrollTop = this.log.scrollHeight;
    // Focus the composer now, in the same task that drew the card: after the await below the
    // person may be typing into the card's own answer box, and moving focus then sent their
    // keystrokes into the composer (the answer lost, the card answered with nothing).
    if (!this.input.disabled) this.input.focus();
    this.drawSessions(await this.refreshSessions());
  }
}

/** A past call as the live progress line showed it: its label, ticked, refused or gated. */
function progressLine(call) {
  const gated = call.error === "APPROVAL_REQUIRED";
  const tone = call.ok ? "" : (gated ? " gated" : " refused");
  return el("div", { class: `progress done${tone}`, "data-tool": call.tool }, labels[call.tool] || call.tool,
    call.ok ? null : el("span", { class: "verdict-note" }, gated ? " — needs approval" : ` — ${call.error || "failed"}`));
}

/** A card decided in this page: buttons out, who decided and when in. */
function closeCard(card, entry, decided, followUpText, ctx) {
  card.classList.remove("open");
  for (const b of card.querySelectorAll(".actions, .followup-form")) b.remove();
  if (!entry) return;
  const payload = entry.payload || {};
  const answer = decided ? { answer: { decision: decided.decision, approver: decided.approver, decided_at: decided.decided_at } } :
    { answer: entry.status === "cancelled" ? { decision: "CANCEL" } : (followUpText !== undefined ? followUpText : payload),
      _by: ctx.me && ctx.me.platform, _at: new Date().toISOString() };
  card.append(decidedLine(card.dataset.kind, answer, ctx));
}

/** An interrupt-shaped object from a node.suspended trace event (for cards already answered). */
function fromEvent(ev) {
  return { id: `${ev.task}.${ev.node}.${ev.kind}`, message: ev.question, metadata: { kind: ev.kind, task: ev.task, node: ev.node, tool: ev.tool } };
}

// RUN_ERROR codes of an answer that does not fit the pending question (docs/API.md §3)
const REFUSED_ANSWERS = new Set(["INTERRUPT_STALE", "APPROVAL_DIGEST_MISMATCH", "RESUME_INVALID"]);

function errorText(err) {
  if (err instanceof ApiError) return `${err.code ? err.code + ": " : ""}${err.message}`;
  return String(err && err.message ? err.message : err);
}

