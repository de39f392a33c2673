// Drives `skillc serve` with the official AG-UI TypeScript client (@ag-ui/client): one HttpAgent
// plays the steps given as JSON on stdin in order, as a front end would, and prints one JSON
// line per step: the events it saw, what runAgent threw (if anything), the interrupts pending
// afterwards and every console warning or error the client printed.
// Usage: AGUI_CLIENT_DIR=<folder holding node_modules> node agui_client.mjs < steps.json
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { readFileSync } from "node:fs";

const dir = process.env.AGUI_CLIENT_DIR;
const { HttpAgent } = await import(pathToFileURL(join(dir, "node_modules", "@ag-ui", "client", "dist", "index.mjs")).href);
const plan = JSON.parse(readFileSync(0, "utf-8"));

const said = [];
for (const level of ["warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => { said.push(`${level}: ${args.map(String).join(" ")}`); original(...args); };
}

const agent = new HttpAgent({ url: plan.url, headers: plan.headers || {}, threadId: plan.threadId });
let n = 0;
for (const step of plan.steps) {
  n += 1;
  const events = [];
  said.length = 0;
  let error = null;
  const runId = `${plan.threadId}-run-${n}`;
  const params = { runId };
  if (step.send !== undefined) {
    agent.addMessage({ id: `${runId}.m`, role: "user", content: step.send });
  } else if (step.approve !== undefined) {
    const pending = agent.pendingInterrupts[0];
    const digest = step.approve === "digest" ? pending.metadata.digest : step.approve;
    params.resume = [{ interruptId: pending.id, status: "resolved", payload: { decision: "CONFIRM", digest } }];
  } else if (step.resume !== undefined) {
    params.resume = step.resume;
  }
  try {
    await agent.runAgent(params, { onEvent: ({ event }) => { events.push(event); } });
  } catch (err) {
    error = `${err && err.name}: ${err && err.message}`;
  }
  process.stdout.write(JSON.stringify({ step, events, error, said: [...said],
                                        pending: agent.pendingInterrupts }) + "\n");
}
