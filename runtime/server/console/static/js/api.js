// The console's only way to the server: the public HTTP API (docs/API.md) on this same origin.
// In production the gateway in front of the server signs each request's platform headers; in
// development mode the server acts as its dev identity unless this browser picked another one
// (devidentity.js), sent as an unsigned X-Skillc-Identity header.

let devIdentity = null; // base64 of the picked identity's JSON, development mode only

/** Act as `platform` (an object) in development mode from now on; null: the server's default. */
export function setDevIdentity(platform) {
  devIdentity = platform ? btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(platform)))) : null;
}

function withIdentity(headers) {
  return devIdentity ? { ...headers, "X-Skillc-Identity": devIdentity } : headers;
}

/** An API error with the server's JSON error body (code, message) when it sent one. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.message || body.error)) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.code = body && body.code;
  }
}

async function request(method, path, body) {
  const init = { method, headers: withIdentity({ Accept: "application/json" }), credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { message: text }; }
  if (!res.ok) throw new ApiError(res.status, data && data.error && typeof data.error === "object" ? data.error : data);
  return data;
}

export const getJSON = (path) => request("GET", path);
export const postJSON = (path, body) => request("POST", path, body ?? {});

/** The trace of a session as a list of events (the endpoint serves JSON lines). */
export async function getTrace(path) {
  const res = await fetch(path, { headers: withIdentity({ Accept: "application/x-ndjson, application/json" }), credentials: "same-origin" });
  const text = await res.text();
  if (!res.ok) {
    let body = null;
    try { body = JSON.parse(text); } catch { body = { message: text }; }
    throw new ApiError(res.status, body && body.error && typeof body.error === "object" ? body.error : body);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) return JSON.parse(trimmed);
  return trimmed ? trimmed.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)) : [];
}

/** POST a RunAgentInput to the AG-UI endpoint and call onEvent(event) for each SSE event of the
 * stream, in order. Resolves when the stream ends; rejects with ApiError on an HTTP error. */
export async function runAgent(path, input, onEvent) {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: withIdentity({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(input),
  });
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch { body = null; }
    throw new ApiError(res.status, body && body.error && typeof body.error === "object" ? body.error : body);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = parseBlock(block);
      if (event) onEvent(event);
    }
  }
  const tail = parseBlock(buffer);
  if (tail) onEvent(tail);
}

/** One SSE block → the JSON object of its data lines (comments and other fields ignored). */
export function parseBlock(block) {
  const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
  if (!data) return null;
  try { return JSON.parse(data); } catch { return null; }
}
