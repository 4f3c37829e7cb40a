// The page: ask, read the cited answer, open a citation's evidence, explore the graph.
// Every text from the collection goes through textContent, never innerHTML.
"use strict";

const $ = (id) => document.getElementById(id);
const COLORS = { gene: "#1f77b4", disease: "#d62728", chemical: "#2ca02c", variant: "#9467bd",
                 pathway: "#ff7f0e", cell: "#8c564b", other: "#7f7f7f" };
let result = null;
let cy = null;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function list(id) {
  return $(id).value.split(",").map((s) => s.trim()).filter(Boolean);
}

async function api(path, options) {
  for (;;) {
    const response = await fetch(path, options);
    const body = await response.json();
    if (response.status === 503 && body.retry) {  // an update holds the collection
      showError(body.error + " Trying again in 5 s.");
      await new Promise((r) => setTimeout(r, 5000));
      continue;
    }
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function ask(event) {
  event.preventDefault();
  const body = { question: $("question").value };
  const entities = list("entities");
  const relations = list("relations");
  if (entities.length) body.entities = entities;
  if (relations.length) body.relationship_types = relations;
  for (const key of ["since", "until", "min_weight"]) {
    if ($(key).value) body[key] = Number($(key).value);
  }
  $("progress").hidden = false;
  showError("");
  try {
    result = await api("/api/query", { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
    showAnswer(result);
    drawGraph(result);
  } catch (err) {
    showError(err.message);
  } finally {
    $("progress").hidden = true;
  }
}

function showAnswer(res) {
  const answer = $("answer");
  answer.replaceChildren();
  $("references").replaceChildren();
  $("follow-ups").replaceChildren();
  $("evidence").hidden = true;
  for (const w of res.warnings || []) {  // a relaxed search, a failed parse: apart from the answer
    answer.append(el("p", "Note: " + w + ".", "note"));
  }
  if (res.no_evidence) {
    answer.append(el("p", "No evidence: " + res.no_evidence.reason + "."));
    return;
  }
  const text = res.answer || "";
  const p = el("p");
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    p.append(document.createTextNode(text.slice(last, m.index)));
    const link = el("a", m[0], "cite");
    link.dataset.n = m[1];
    link.addEventListener("click", () => showEvidence(Number(m[1])));
    p.append(link);
    last = m.index + m[0].length;
  }
  p.append(document.createTextNode(text.slice(last)));
  answer.append(p);
  for (const ref of res.references) {
    const item = el("li");
    item.append(el("span", ref.citations.map((n) => "[" + n + "]").join("") + " "));
    item.append(el("span", [ref.title || ref.paper_id, ref.journal, ref.year].filter(Boolean).join(". ")));
    item.append(...links(ref));
    $("references").append(item);
  }
  if (res.follow_ups && res.follow_ups.length) {
    $("follow-ups").append(el("h3", "Follow-up questions"));
    for (const q of res.follow_ups) {
      const a = el("a", q, "cite");
      a.addEventListener("click", () => { $("question").value = q; });
      const line = el("div");
      line.append(a);
      $("follow-ups").append(line);
    }
  }
}

function links(p) {
  const out = [];
  const add = (label, url) => { const a = el("a", label); a.href = url; a.target = "_blank";
                                a.rel = "noopener"; out.push(document.createTextNode(" "), a); };
  if (p.pmid) add("PubMed", "https://pubmed.ncbi.nlm.nih.gov/" + encodeURIComponent(p.pmid) + "/");
  if (p.pmcid) add("PMC", "https://www.ncbi.nlm.nih.gov/pmc/articles/" + encodeURIComponent(p.pmcid) + "/");
  if (p.doi) add("DOI", "https://doi.org/" + encodeURI(p.doi));
  return out;
}

function showEvidence(n) {
  const edge = result.edges.find((e) => e.n === n);
  if (!edge) return;
  const p = edge.payload;
  const box = $("evidence");
  box.replaceChildren();
  box.append(el("strong", "[" + n + "] " + p.source + " " + p.relationship_type.replaceAll("_", " ") + " " + p.target));
  const sentences = Array.isArray(p.evidence) ? p.evidence.map((e) => e.text) : [p.evidence].filter(Boolean);
  for (const s of sentences) box.append(el("blockquote", s, "evidence-sentence"));
  box.append(el("div", [p.title || p.paper_id, p.journal, p.year].filter(Boolean).join(". "), "muted"));
  box.append(...links(p));
  box.hidden = false;
}

function conflicting(res) {
  const keys = new Set();
  for (const pair of res.consensus || []) if (pair.conflict) keys.add(pair.source_key + "|" + pair.target_key);
  return keys;
}

function graphElements(edges, conflicts) {
  const nodes = new Map();
  const out = [];
  for (const e of edges) {
    const p = e.payload || e;
    nodes.set(p.source_key, { id: p.source_key, label: p.source, type: p.source_type });
    nodes.set(p.target_key, { id: p.target_key, label: p.target, type: p.target_type });
    out.push({ data: { id: "e" + (e.id || e.point_id), source: p.source_key, target: p.target_key,
                       label: p.relationship_type, weight: e.weight || 0,
                       conflict: conflicts.has(p.source_key + "|" + p.target_key) ? 1 : 0 } });
  }
  return [...[...nodes.values()].map((d) => ({ data: d })), ...out];
}

function drawGraph(res) {
  cy = cytoscape({
    container: $("graph"),
    elements: graphElements(res.edges, conflicting(res)),
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10,
        "background-color": (n) => COLORS[n.data("type")] || COLORS.other } },
      { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle",
        width: (e) => 1 + 6 * Math.min(1, 20 * e.data("weight")), "line-color": "#999",
        "target-arrow-color": "#999" } },
      { selector: "edge[conflict = 1]", style: { "line-color": "#d62728", "line-style": "dashed",
        "target-arrow-color": "#d62728" } },
    ],
    layout: { name: "cose", animate: false },
  });
  cy.on("tap", "node", (event) => showEntity(event.target.data("label")));
  window.fastbmragGraph = cy;  // for tests and the curious
}

async function showEntity(name) {
  const box = $("entity");
  box.replaceChildren(el("span", "Loading " + name + "...", "muted"));
  box.hidden = false;
  try {
    const card = await api("/api/entity?name=" + encodeURIComponent(name));
    box.replaceChildren();
    box.append(el("strong", card.name + " (" + card.type + ", " + (card.id || "no id") + ")"));
    for (const [k, v] of Object.entries(card.vocabulary || {})) box.append(el("div", k + ": " + v));
    if (!card.in_collection) {
      box.append(el("div", "No edge in this collection is about it.", "muted"));
      if (card.narrower.length) box.append(el("div", "Concepts below it with edges: " + card.narrower.join(", ")));
      return;
    }
    box.append(el("div", "degree " + card.degree + ", " + card.papers + " papers"));
    box.append(el("div", "relations: " + Object.entries(card.relations).map(([t, n]) => t + " " + n).join(", ")));
    const more = el("button", "Expand neighbours");
    more.addEventListener("click", () => expand(name));
    box.append(more);
  } catch (err) {
    box.replaceChildren(el("span", err.message, "error"));
  }
}

async function expand(name) {
  const rows = await api("/api/neighbours?name=" + encodeURIComponent(name));
  const fresh = graphElements(rows, new Set()).filter((e) => cy.getElementById(e.data.id).empty());
  cy.add(fresh);
  cy.layout({ name: "cose", animate: false }).run();
}

async function start() {
  $("ask").addEventListener("submit", ask);
  try {
    const status = await api("/api/status");
    $("collection").textContent = status.collection + ": " + status.papers.done + " papers, " + status.edges + " edges";
  } catch (err) {
    showError(err.message);
  }
}

start();
