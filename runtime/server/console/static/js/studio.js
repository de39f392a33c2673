// The studio view: agents with their skills and task graphs, and each skill's contract as
// `skillc explain` tells it (per tool, per argument).
import { getJSON } from "./api.js";
import { PATHS } from "./paths.js";
import { drawGraph } from "./graph.js";
import { el, replace } from "./util.js";

/** #/studio, #/studio/agent/<code>, #/studio/skill/<key>. */
export async function renderStudio(root, parts) {
  const [kind, name] = parts;
  if (kind === "agent" && name) return renderAgent(root, name);
  if (kind === "skill" && name) return renderSkill(root, name);
  const data = await getJSON(PATHS.studio());
  const agents = data.agents.map((a) => el("div", { class: "panel agent", "data-agent": a.agent_code },
    el("h3", {}, el("a", { href: `#/studio/agent/${encodeURIComponent(a.agent_code)}` }, a.agent_name || a.agent_code),
      " ", el("span", { class: "badge plain mono" }, a.agent_code)),
    el("div", { class: "muted" }, a.mission_desc),
    el("ul", { class: "skill-list" }, a.skills.map((k) => el("li", {}, skillLink(k))))));
  const rejected = data.rejected.length ? el("div", { class: "panel gap-top" },
    el("h3", {}, "Rejected at load"),
    el("ul", {}, data.rejected.map((r) => el("li", {}, el("code", {}, r.key), ": ",
      r.diagnostics.map((d) => `${d.code} ${d.message}`).join("; "))))) : null;
  const skills = el("table", { class: "args" },
    el("thead", {}, el("tr", {}, ["skill", "name", "mode", "target", "flags"].map((h) => el("th", {}, h)))),
    el("tbody", {}, data.skills.map((s) => el("tr", {},
      el("td", {}, skillLink(s.key)), el("td", {}, s.name), el("td", {}, s.mode), el("td", { class: "mono" }, s.target || ""),
      el("td", {}, [s.delegatable ? "delegatable" : "", s.read_only ? "read-only" : "writes"].filter(Boolean).join(", "))))));
  replace(root, el("h2", {}, "Agents"), el("div", { class: "agents" }, agents), rejected,
    el("h2", {}, "Skills"), el("div", { class: "panel" }, skills));
}

function skillLink(key) {
  return el("a", { href: `#/studio/skill/${encodeURIComponent(key)}`, class: "mono" }, key);
}

async function renderAgent(root, code) {
  const [data, graph] = await Promise.all([getJSON(PATHS.studio()), getJSON(PATHS.agentGraph(code))]);
  const agent = data.agents.find((a) => a.agent_code === code);
  const profile = agent ? el("dl", { class: "profile" },
    ["identity_desc", "mission_desc", "boundary_desc", "style_desc", "principle_desc"].map((f) =>
      [el("dt", { class: "muted" }, f.replace("_desc", "")), el("dd", {}, agent[f] || "—")])) : null;
  replace(root,
    el("p", {}, el("a", { href: "#/studio" }, "← studio")),
    el("h2", {}, `Agent ${agent ? agent.agent_name : code} `, el("span", { class: "badge plain mono" }, code)),
    el("div", { class: "panel" }, profile),
    el("h3", {}, "Task graph template"),
    el("p", { class: "muted" }, "An arrow runs from a provider skill to the skill whose input it supplies (labelled with the input). Orange: the skill writes."),
    el("div", { class: "graph-wrap" }, drawGraph(graph)),
    el("h3", {}, "Skills"),
    el("ul", { class: "skill-list" }, graph.nodes.map((n) => el("li", {}, skillLink(n.id), ` ${n.skill_name}`,
      n.unavailable_inputs.length ? el("span", { class: "badge bad" }, "input unavailable: " +
        n.unavailable_inputs.map((u) => `${u.input} (${u.reason})`).join(", ")) : null))));
}

async function renderSkill(root, key) {
  const s = await getJSON(PATHS.skill(key));
  const head = [s.mode, s.delegatable ? "delegatable" : null, s.target ? `target ${s.target}` : null].filter(Boolean).join(", ");
  const tools = s.tools.map((t) => el("section", { class: "panel tool", "data-tool": t.name },
    el("h3", {}, el("code", {}, t.name), " ",
      el("span", { class: `badge ${t.side_effect === "WRITE" ? "warn" : "plain"}` }, t.side_effect),
      t.confirm ? el("span", { class: "badge warn" }, "confirm") : null,
      t.in_tool_names ? null : el("span", { class: "badge bad" }, "not in toolNames"),
      t.label ? el("span", { class: "muted" }, ` “${t.label}”`) : null),
    t.idempotency_key.length ? el("div", {}, "Idempotency key: ", el("code", {}, t.idempotency_key.join(", "))) : null,
    t.verify_tool ? el("div", {}, "Verified with ", el("code", {}, t.verify_tool)) : null,
    t.extracts.length ? el("div", {}, "Extracts: ", el("code", {}, t.extracts.join(", "))) :
      (t.extracts_configured ? el("div", {}, "Extracts values from the response (see the trace's evidence)") : null),
    el("div", {}, t.has_success ? "Business success judged by the contract" : "No business judgement configured"),
    el("table", { class: "args" },
      el("thead", {}, el("tr", {}, ["argument", "bound", "legal sources", "when missing", "when not proven"].map((h) => el("th", {}, h)))),
      el("tbody", {}, t.args.map((a) => el("tr", { "data-arg": a.param },
        el("td", {}, el("code", {}, a.path), a.label ? ` (${a.label})` : "", a.sensitive ? el("span", { class: "badge bad" }, "sensitive") : null,
          a.required ? null : el("span", { class: "badge plain" }, "optional")),
        el("td", {}, a.bound), el("td", {}, a.legal), el("td", {}, a.when_missing || "—"), el("td", {}, a.when_unproven || "—")))))));
  replace(root,
    el("p", {}, el("a", { href: "#/studio" }, "← studio")),
    el("h2", {}, `Skill ${s.name} `, el("span", { class: "badge plain mono" }, s.key)),
    el("p", {}, head), el("p", { class: "muted" }, s.semantic_desc),
    s.contract_sha256 ? el("p", { class: "muted provenance" }, `compiled by skillc ${s.compiler_version || "?"} from contract sha256 `,
      el("code", { title: s.contract_sha256 }, s.contract_sha256.slice(0, 12)),
      s.module_sha256 ? [" · module sha256 ", el("code", { title: s.module_sha256 }, s.module_sha256.slice(0, 12))] : null) : null,
    el("details", {}, el("summary", {}, "Manual"), el("pre", {}, s.manual)),
    el("h3", {}, "Contract"), tools,
    s.inputs.length ? el("div", { class: "panel" }, el("h3", {}, "Inputs"), el("ul", {}, s.inputs.map((i) =>
      el("li", {}, el("code", {}, i.name), i.from ? ` from ${i.from}` : "", i.provider ? ` (provider ${i.provider})` : "",
        i.required ? "" : " (optional)")))) : null,
    s.outputs.length ? el("div", { class: "panel gap-top" }, el("h3", {}, "Outputs"), el("ul", {}, s.outputs.map((o) =>
      el("li", {}, el("code", {}, o.name), ` ${o.type}`, o.share ? `, shared ${o.share}` : "", o.required ? "" : " (optional)")))) : null);
}
