// Every HTTP path the console uses, in one place (docs/API.md).
const q = encodeURIComponent;

export const PATHS = {
  agui: () => "/agui",
  whoami: () => "/api/me",
  sessions: () => "/api/sessions",
  session: (id) => `/api/sessions/${q(id)}`,
  state: (id) => `/api/sessions/${q(id)}/state`,
  pending: (id) => `/api/sessions/${q(id)}/pending`,
  trace: (id) => `/api/sessions/${q(id)}/trace`,
  evidence: (id) => `/api/sessions/${q(id)}/evidence`,
  studio: () => "/api/studio",
  skill: (key) => `/api/studio/skills/${q(key)}`,
  agentGraph: (code) => `/api/studio/agents/${q(code)}/graph`,
};
