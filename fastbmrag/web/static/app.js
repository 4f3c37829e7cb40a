// The page: the collection at a glance, ask and read the cited answer with each citation's
// sentences in place, find an entity, explore the graph. Every text from the collection goes
// through textContent, never innerHTML. The URL holds the question and the filters.
"use strict";

const $ = (id) => document.getElementById(id);
const COLORS = { gene: "#1f77b4", disease: "#d62728", chemical: "#2ca02c", variant: "#9467bd",
                 pathway: "#ff7f0e", cell: "#8c564b", other: "#7f7f7f" };
// The filters: the declared options a request may set (/api/options), by their QueryOptions
// names (the API's and, with dashes, the CLI's), each with its input: "list", "number",
// "choice", "flag" or "text". The form is built from them (declareFilters).
let DECLARED = {};
let result = null;
let cy = null;
let lastTapped = null;  // the node tapped before: a second one offers the path between them

// "1 edge", "2 edges"
function counted(n, noun) {
  return n + " " + noun + (n === 1 ? "" : "s");
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function list(id) {
  return $(id).value.split(",").map((s) => s.trim()).filter(Boolean);
}

// A message of the server names CLI flags ("--min-score"): on the page, the filter's label.
function phrased(message) {
  return String(message).replace(/--([a-z][a-z-]*)/g, (flag, name) => {
    const input = $(name.replaceAll("-", "_"));
    const label = input && input.closest("label");
    return label ? "the \u201c" + label.textContent.trim() + "\u201d filter" : flag;
  });
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
  $("error").textContent = message ? phrased(message) : "";
  $("error").hidden = !message;
}

function requestBody() {
  const body = { question: $("question").value };
  for (const [key, opt] of Object.entries(DECLARED)) {
    const input = $(key);
    if (opt.input === "list") { if (list(key).length) body[key] = list(key); }
    else if (opt.input === "number") { if (input.value !== "") body[key] = Number(input.value); }
    else if (opt.input === "flag") { if (input.checked !== opt.default) body[key] = input.checked; }
    else if (input.value !== "") body[key] = input.value;
  }
  return body;
}

// The URL holds the question and every filter that differs from its default.
function remember(body) {
  const params = new URLSearchParams({ q: body.question });
  for (const [key, value] of Object.entries(body)) {
    const input = $(key);
    if (key === "question" || !input) continue;
    const shown = Array.isArray(value) ? value.join(", ") : String(value);
    const unchanged = input.type === "checkbox" ? input.defaultChecked === value : input.defaultValue === shown;
    if (!unchanged) params.set(key, shown);
  }
  history.replaceState(null, "", "?" + params.toString());
}

function restore(params) {
  $("question").value = params.get("q") || "";
  for (const [key, value] of params) {
    const input = $(key);
    if (!input || key === "q") continue;
    if (input.type === "checkbox") input.checked = value === "true";
    else input.value = value;
    $("filters").open = true;
  }
}

async function ask(event) {
  if (event) event.preventDefault();
  const body = requestBody();
  remember(body);
  $("progress").hidden = false;
  $("start").hidden = true;
  showError("");
  try {
    result = await api("/api/query", { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
    showAnswer(result);
    drawGraph(result.edges, result);
  } catch (err) {
    showError(err.message);
  } finally {
    $("progress").hidden = true;
  }
}

function paperLine(p) {  // "Title. Journal. 2015", a title's own final stop not doubled
  const title = String(p.title || p.paper_id).replace(/\.+$/, "");
  const rest = [p.journal, p.year].filter(Boolean).join(". ");
  return rest ? title + (/[?!]$/.test(title) ? " " : ". ") + rest : title;
}

function askAbout(question) {
  $("question").value = question;
  ask();
}

function clickable(text, action, cls) {
  const a = el("a", text, cls || "cite");
  a.href = "#";
  a.addEventListener("click", (event) => { event.preventDefault(); action(); });
  return a;
}

function showAnswer(res) {
  const answer = $("answer");
  for (const id of ["understood", "notes", "answer", "references", "follow-ups"]) $(id).replaceChildren();
  $("evidence").hidden = true;
  const understood = res.understood || [];  // what the question names, each name to its card
  if (understood.length) {
    const line = $("understood");
    line.append("Understood: ");
    const notes = {absent: ", not in this collection", null: ", not used: entity flags given"};
    understood.forEach((u, i) => {
      if (i) line.append(", ");
      line.append(clickable(u.name, () => showEntity(u.id || u.name), "entity"));
      const broader = u.used_as === "broader" && u.broader
        ? ", not in this collection: answered from " + u.broader.name : "";
      line.append(" (" + u.id + (broader || notes[u.used_as] || "") + ")");
    });
  }
  for (const w of res.warnings || []) {  // a relaxed search, retracted papers left out: apart
    $("notes").append(el("p", "Note: " + phrased(w) + ".", "note"));
  }
  if (res.no_evidence) {
    answer.append(el("p", "No evidence: " + phrased(res.no_evidence.reason) + "."));
    const near = res.no_evidence.closest || [];
    if (near.length) {
      const p = el("p", "Closest entities in the collection: ");
      near.forEach((c, i) => {
        if (i) p.append(", ");
        p.append(clickable(c.name + " (" + counted(c.degree, "edge") + ")", () => showEntity(c.name)));
      });
      answer.append(p);
    }
    return;
  }
  if (res.answer === null) {
    // matched is null where the question ranked the search: no count of every edge passing
    const passed = res.filters.matched === null ? "" : " (" + res.filters.matched + " passed the filters)";
    answer.append(el("p", counted(res.edges.length, "edge") + passed + "; click one in the graph or below.",
                     "muted"));
    const items = el("ol");
    for (const e of res.edges) {
      const li = el("li");
      li.append(clickable(e.payload.source + " " + e.payload.relationship_type.replaceAll("_", " ") + " "
                          + e.payload.target, () => showEvidence(e.n)));
      if (e.payload.design) li.append(el("span", " [" + e.payload.design + "]", "design"));
      if (e.payload.finding === "background") li.append(el("span", " [background: cited as known]", "background"));
      items.append(li);
    }
    answer.append(items);
    return;
  }
  const text = res.answer || "";
  const p = el("p");
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    p.append(document.createTextNode(text.slice(last, m.index)));
    const link = clickable(m[0], () => showEvidence(Number(m[1])));
    link.dataset.n = m[1];
    p.append(link);
    last = m.index + m[0].length;
  }
  p.append(document.createTextNode(text.slice(last)));
  answer.append(p);
  for (const ref of res.references) {
    const item = el("li");
    item.append(el("span", ref.citations.map((n) => "[" + n + "]").join("") + " "));
    item.append(el("span", paperLine(ref)));
    if (ref.study) item.append(el("span", " [" + ref.study + "]", "design"));
    if (ref.retracted) item.append(el("span", " [retracted]", "retracted"));
    item.append(...links(ref));
    $("references").append(item);
  }
  if (res.follow_ups && res.follow_ups.length) {
    $("follow-ups").append(el("h3", "Follow-up questions"));
    for (const q of res.follow_ups) {
      const line = el("div");
      line.append(clickable(q, () => askAbout(q)));
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

// Where in the paper a sentence is: the title, the abstract, or a main-text section.
function place(sentence) {
  if (sentence.where === "title") return "Title";
  if (sentence.where === "abstract") return "Abstract";
  if (sentence.section) return "Main text, " + sentence.section;
  return sentence.passage ? "Main text, passage " + sentence.passage : "Main text";
}

function showEvidence(n) {
  const edge = result.edges.find((e) => e.n === n);
  if (!edge) return;
  const p = edge.payload;
  const box = $("evidence");
  box.replaceChildren();
  box.append(el("strong", "[" + n + "] " + p.source + " " + p.relationship_type.replaceAll("_", " ") + " " + p.target));
  if (p.retracted) box.append(el("div", "From a retracted paper.", "retracted"));
  if (p.finding === "background") box.append(el("div", "Background: the paper cites this as known, not as its own result.", "muted"));
  const sentences = Array.isArray(p.evidence) ? p.evidence : [{ text: p.evidence }].filter((s) => s.text);
  for (const s of sentences) {
    box.append(el("div", place(s), "place"));
    box.append(el("blockquote", s.text, "evidence-sentence"));
  }
  if (p.description_source === "refined") {
    box.append(el("div", "Refined from the main text:", "place"));
    box.append(el("p", p.description, "description"));
  }
  box.append(el("div", paperLine(p), "muted"));
  box.append(...links(p));
  box.hidden = false;
}

function conflicting(res) {
  const keys = new Set();
  for (const pair of (res && res.consensus) || []) if (pair.conflict) keys.add(pair.source_key + "|" + pair.target_key);
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
                       label: p.relationship_type.replaceAll("_", " "), weight: e.weight || 0, n: e.n || 0,
                       conflict: conflicts.has(p.source_key + "|" + p.target_key) ? 1 : 0 } });
  }
  return [...[...nodes.values()].map((d) => ({ data: d })), ...out];
}

function drawGraph(edges, res) {
  cy = cytoscape({
    container: $("graph"),
    elements: graphElements(edges, conflicting(res)),
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10,
        "background-color": (n) => COLORS[n.data("type")] || COLORS.other } },
      { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle",
        label: "data(label)", "font-size": 7, color: "#555", "text-rotation": "autorotate",
        width: (e) => 1 + 6 * Math.min(1, 20 * e.data("weight")), "line-color": "#999",
        "target-arrow-color": "#999" } },
      { selector: "edge[conflict = 1]", style: { "line-color": "#d62728", "line-style": "dashed",
        "target-arrow-color": "#d62728" } },
    ],
    layout: { name: "cose", animate: false, nodeRepulsion: () => 8000, idealEdgeLength: () => 80 },
  });
  cy.on("tap", "node", (event) => {
    const name = event.target.data("label");
    const previous = lastTapped;
    lastTapped = name;
    showEntity(name, previous);
  });
  cy.on("tap", "edge", (event) => { if (event.target.data("n")) showEvidence(event.target.data("n")); });
  window.fastbmragGraph = cy;  // for tests and the curious
  drawLegend();
}

function drawLegend() {
  const legend = $("legend");
  legend.replaceChildren();
  const present = new Set(cy.nodes().map((n) => n.data("type")));
  for (const [type, color] of Object.entries(COLORS)) {
    if (!present.has(type)) continue;
    const key = el("span", "\u25cf ", "swatch");
    key.style.color = color;
    const item = el("span", "", "legend-item");
    item.append(key, type);
    legend.append(item);
  }
  legend.append(el("span", "arrow: the relation's direction; width: the edge's weight; "
                          + "red dashed: papers disagree", "legend-item"));
}

let cardShown = 0;  // the latest card asked for: an older answer arriving later is dropped

async function showEntity(name, previous) {
  const box = $("entity");
  const mine = ++cardShown;
  box.replaceChildren(el("span", "Loading " + name + "...", "muted"));
  box.hidden = false;
  try {
    const card = await api("/api/entity?name=" + encodeURIComponent(name));
    const disagreements = card.in_collection
      ? await api("/api/contradictions?entity=" + encodeURIComponent(name)) : [];
    if (mine !== cardShown) return;
    box.replaceChildren();
    box.append(el("strong", card.name + " (" + card.type + ", " + (card.id || "no id") + ")"));
    for (const [k, v] of Object.entries(card.vocabulary || {})) box.append(el("div", k + ": " + v));
    if (!card.in_collection) {
      box.append(el("div", "No edge in this collection is about it.", "muted"));
      if (card.narrower.length) box.append(el("div", "Concepts below it with edges: " + card.narrower.join(", ")));
      return;
    }
    const papers = (n) => n + (n === 1 ? " paper" : " papers");
    box.append(el("div", "degree " + card.degree + ", " + papers(card.papers)));
    for (const [t, n] of Object.entries(card.relations)) {  // papers that found it; those citing it apart
      const cited = (card.cited || {})[t];
      box.append(el("div", t.replaceAll("_", " ") + ": " + papers(n) + " found it" + (cited ? ", " + cited + " cite it as known" : "")));
    }
    const designs = Object.entries(card.papers_by_design || {});
    if (designs.length) {
      box.append(el("div", "by design: " + designs.map(([d, n]) => n + " " + d).join(", "), "design"));
    }
    if (card.partners.length) {
      box.append(el("div", "partners: " + card.partners.map((p) => p.name + " (" + p.papers + ")").join(", ")));
    }
    if ((card.retracted_papers || []).length) {
      box.append(el("div", "left out, retracted: " + card.retracted_papers.join(", "), "retracted"));
    }
    for (const pair of disagreements) {  // papers that disagree about one of its relations
      const sides = Object.entries(pair.relations)
        .map(([rel, papers]) => rel.replaceAll("_", " ") + " (" + papers.join(", ")
             + ((pair.cited || {})[rel] ? "; cited as known: " + pair.cited[rel].join(", ") : "") + ")").join(" vs ");
      const note = pair.only_with_retracted ? "; only with retracted papers" : "";
      box.append(el("div", "Papers disagree: " + pair.source_name + " -> " + pair.target_name
                           + ": " + sides + note, "disagreement"));
    }
    const actions = el("div", "", "actions");
    const more = el("button", "Expand neighbours");
    more.type = "button";
    more.addEventListener("click", () => expand(name));
    const about = el("button", "Ask about it");
    about.type = "button";
    about.addEventListener("click", () => askAbout("What is known about " + card.name + "?"));
    const target = el("input");
    target.placeholder = "path to ...";
    const go = el("button", "Path");
    go.type = "button";
    go.addEventListener("click", () => showPath(card.name, target.value, box));
    actions.append(more, about, target, go);
    if (previous && previous !== name) {  // two nodes picked in the graph: the path between them
      const between = el("button", "Path from " + previous, "path-from");
      between.type = "button";
      between.addEventListener("click", () => showPath(previous, name, box));
      actions.append(between);
    }
    box.append(actions);
  } catch (err) {
    if (mine === cardShown) box.replaceChildren(el("span", phrased(err.message), "error"));
  }
}

async function showPath(start, end, box) {
  if (!end.trim()) return;
  try {
    const found = await api("/api/path?start=" + encodeURIComponent(start) + "&end=" + encodeURIComponent(end));
    const out = el("div", "", "path");
    if (!found.length) out.append(el("div", "No path of at most 3 hops.", "muted"));
    for (const hops of found.slice(0, 3)) {
      out.append(el("div", hops.map((h) => h.source + " " + h.relationship_type.replaceAll("_", " ") + " "
                                          + h.target + " (" + h.papers.length + " papers)").join("; ")));
    }
    box.append(out);
    out.scrollIntoView({ block: "nearest" });
  } catch (err) {
    box.append(el("div", phrased(err.message), "error"));
  }
}

async function expand(name) {
  const rows = await api("/api/neighbours?name=" + encodeURIComponent(name));
  if (!cy) drawGraph([], null);
  const fresh = graphElements(rows, new Set()).filter((e) => cy.getElementById(e.data.id).empty());
  cy.add(fresh);
  cy.layout({ name: "cose", animate: false }).run();
  drawLegend();
}

let searching = null;
async function complete() {
  const text = $("entity-search").value.trim();
  if (text.length < 2) return;
  clearTimeout(searching);
  searching = setTimeout(async () => {
    try {
      const found = await api("/api/entities?text=" + encodeURIComponent(text));
      $("entity-options").replaceChildren(...found.map((e) => {
        const option = el("option");
        option.value = e.name;
        option.label = (e.id || e.type) + ", " + counted(e.degree, "edge");
        return option;
      }));
    } catch (err) {
      showError(err.message);
    }
  }, 150);
}

async function showStart() {
  const start = $("start");
  try {
    const o = await api("/api/overview");
    $("collection").textContent = o.collection + ": " + counted(o.papers, "paper") + ", " + counted(o.edges, "edge");
    start.replaceChildren(el("h2", "Collection " + o.collection));
    start.append(el("p", counted(o.papers, "paper") + ", " + counted(o.edges, "edge") + ", " + o.entities + (o.entities === 1 ? " entity" : " entities")
                        + (o.retracted_papers ? ", " + counted(o.retracted_papers, "retracted paper") + " (left out of answers)" : "")
                        + (o.last_update ? "; last updated " + o.last_update : "")));
    const news = el("div", "", "whats-new card");  // what the last run changed, first
    news.id = "whats-new";
    start.append(news);
    const columns = el("div", "", "columns");
    for (const [type, rows] of Object.entries(o.top)) {
      if (!rows.length) continue;
      const col = el("div", "", "column");
      col.append(el("h3", "Most connected " + type + "s"));
      for (const r of rows) {
        const line = el("div");
        const edges = counted(r.degree, "edge");
        line.append(clickable(r.name, () => showEntity(r.name)), " ",
                    el("span", edges + ", weight " + r.weight.toFixed(3), "muted"));
        col.append(line);
      }
      columns.append(col);
    }
    start.append(columns);
    if (o.examples.length) {
      start.append(el("h3", "Ask, for example"));
      for (const q of o.examples) {
        const line = el("div");
        line.append(clickable(q, () => askAbout(q), "cite example"));
        start.append(line);
      }
    }
    if (o.recent_papers.length) {
      start.append(el("h3", "Indexed last"));
      for (const p of o.recent_papers) {
        const line = el("div", paperLine(p));
        line.append(...links(p));
        start.append(line);
      }
    }
    start.hidden = false;
    await showWhatsNew("last");
  } catch (err) {
    showError(err.message);
  }
}

// "What's new": what the last run (or the runs since a date) changed, each entity a link to its
// card, each new disagreement a link to its papers' evidence side by side.
async function showWhatsNew(since) {
  const box = $("whats-new");
  const d = await api("/api/digest?since=" + encodeURIComponent(since));
  const first = d.runs.length ? d.runs[0] : null;
  const when = first ? "run " + first.run_id + " (" + first.command + ", " + first.started_at.slice(0, 10) + ")" : since;
  box.replaceChildren(el("h3", "What's new since " + when));
  const pick = el("input");
  pick.type = "date";
  pick.id = "whats-new-since";
  pick.title = "Show what changed since this day";
  pick.addEventListener("change", () => { if (pick.value) showWhatsNew(pick.value); });
  box.append(pick);
  if (d.nothing) {
    box.append(el("p", "Nothing new since " + when + ".", "muted"));
    return;
  }
  const edges = d.entities.reduce((n, e) => n + e.edges.length, 0);
  const cited = d.entities.reduce((n, e) => n + (e.cited || []).length, 0);
  box.append(el("p", counted(d.papers.length, "new paper") + ", " + counted(edges, "new edge")
                     + (cited ? ", " + counted(cited, "edge") + " a paper restates as known" : "")
                     + (d.retracted.length ? ", " + counted(d.retracted.length, "retracted paper") : "")));
  for (const e of d.entities) {
    if (!e.edges.length && !e.changes.length) continue;
    const line = el("div", "", "news-entity");
    line.append(clickable(e.name, () => showEntity(e.name), "news-link"),
                el("span", " " + counted(e.edges.length, "new edge") + (e.watched ? ", watched" : "")
                           + (e.new_to_collection ? ", new to the collection" : ""), "muted"));
    for (const c of e.changes) {
      const change = el("div", "", "news-change");
      change.append(clickable(c.kind + ": " + c.source_name + " -> " + c.target_name,
                              () => showSides(c), "news-conflict"));
      line.append(change);
    }
    box.append(line);
  }
  for (const p of d.retracted) {
    box.append(el("div", "Retracted: " + paperLine(p) + " (" + counted(p.edges, "edge") + " out of answers)", "retracted"));
  }
}

function showSides(change) {  // the papers on each side of a pair, their evidence side by side
  const box = $("evidence");
  box.replaceChildren(el("strong", change.source_name + " -> " + change.target_name + ": " + change.kind));
  const sides = el("div", "", "side-by-side");
  for (const s of change.sides) {
    const side = el("div", "", "side");
    side.append(el("div", s.relationship_type.replaceAll("_", " ") + " [" + s.paper_id + "]", "side-head"),
                el("div", s.title || "", "muted"), el("blockquote", s.evidence));
    sides.append(side);
  }
  box.append(sides);
  box.hidden = false;
}

// The filters offer what the library accepts: one input per declared option, with its label,
// range, choices and default, read from the server (/api/options), not written here again.
async function declareFilters() {
  DECLARED = await api("/api/options");
  const box = $("filters");
  for (const [name, opt] of Object.entries(DECLARED)) {
    let input;
    if (opt.input === "choice") {
      input = document.createElement("select");
      input.append(...opt.choices.map((c) => new Option(c, c, c === opt.default, c === opt.default)));
    } else {
      input = document.createElement("input");
      input.type = { number: "number", flag: "checkbox" }[opt.input] || "text";
    }
    input.id = name;
    if (opt.input === "number") {
      if (opt.low !== null) input.min = opt.low;
      if (opt.high !== null) input.max = opt.high;
      input.step = opt.whole ? "1" : "any";
      if (opt.default !== null) input.defaultValue = String(opt.default);  // the value attribute
    } else if (opt.input === "flag") {
      input.defaultChecked = opt.default === true;
    } else if (opt.choices.length) {
      input.placeholder = opt.choices.join(", ");
    }
    const label = document.createElement("label");
    label.title = opt.help;
    if (opt.input === "flag") label.append(input, " " + opt.label);
    else label.append(opt.label + " ", input);
    box.append(label);
  }
}

async function start() {
  await declareFilters();
  $("ask").addEventListener("submit", ask);
  $("entity-search").addEventListener("input", complete);
  $("entity-search").addEventListener("change", () => {
    const name = $("entity-search").value.trim();
    if (name) showEntity(name);
  });
  const params = new URLSearchParams(location.search);
  await showStart();
  if (params.get("q")) {
    restore(params);
    ask();
  }
}

start();
