// An agent's task-graph template drawn as inline SVG, laid out here (no library): skills in
// columns by their longest provider chain, providers left of the skills they supply.
import { svg } from "./util.js";

const W = 210, H = 54, GAP_X = 90, GAP_Y = 22, PAD = 16;

/** Column of each node: 0 for a node no edge enters, else 1 + the deepest provider's column. */
export function layers(nodes, edges) {
  const into = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) if (into.has(e.target) && into.has(e.source)) into.get(e.target).push(e.source);
  const depth = new Map();
  const visit = (id, seen) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id)) return 0; // templates are acyclic (the compiler breaks cycles); stay safe anyway
    seen.add(id);
    const d = Math.max(-1, ...into.get(id).map((p) => visit(p, seen))) + 1;
    depth.set(id, d);
    return d;
  };
  for (const n of nodes) visit(n.id, new Set());
  return depth;
}

/** An <svg> of the graph {nodes: [{id, skill_name, mode, target, delegatable, read_only}], edges}. */
export function drawGraph(graph) {
  const depth = layers(graph.nodes, graph.edges);
  const columns = [];
  for (const n of graph.nodes) {
    const d = depth.get(n.id);
    (columns[d] ||= []).push(n);
  }
  const pos = new Map();
  columns.forEach((col, c) => col.forEach((n, r) => pos.set(n.id, { x: PAD + c * (W + GAP_X), y: PAD + r * (H + GAP_Y) })));
  const rows = Math.max(1, ...columns.map((c) => c.length));
  const width = PAD * 2 + columns.length * W + Math.max(0, columns.length - 1) * GAP_X;
  const height = PAD * 2 + rows * H + (rows - 1) * GAP_Y;
  const root = svg("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `task graph of ${graph.agent_code}` });
  root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#7b8699" }))));
  for (const e of graph.edges) {
    const a = pos.get(e.source), b = pos.get(e.target);
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    root.append(svg("g", { class: "edge", "data-source": e.source, "data-target": e.target },
      svg("path", { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, "marker-end": "url(#arrow)" }),
      svg("text", { x: mx, y: (y1 + y2) / 2 - 5, "text-anchor": "middle" }, e.inputs.join(", "))));
  }
  for (const n of graph.nodes) {
    const p = pos.get(n.id);
    const tags = [n.mode];
    if (n.target) tags.push(`target ${n.target}`);
    if (n.delegatable) tags.push("delegatable");
    if (n.unavailable_inputs && n.unavailable_inputs.length) tags.push("input unavailable");
    const title = svg("title", {}, `${n.id}: ${n.skill_name}`);
    root.append(svg("g", { class: `node${n.read_only ? "" : " write"}`, "data-skill": n.id, transform: `translate(${p.x},${p.y})` },
      title,
      svg("rect", { width: W, height: H, rx: 8 }),
      svg("text", { x: 10, y: 21 }, clip(n.id, 30)),
      svg("text", { x: 10, y: 40, class: "sub" }, clip(tags.join(" · "), 34))));
  }
  return root;
}

function clip(text, n) {
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}
