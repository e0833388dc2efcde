"""The debug pages: static HTML shells, one stylesheet and one script, no build chain.

Each page is a shell whose script fetches its JSON document (``/debug/api/...``) and
renders it with the DOM API (``textContent`` only: a pod or node name is never parsed as
HTML). The script and stylesheet are separate files so that the Content-Security-Policy
can forbid inline code (:mod:`asched.debug.server`).
"""

from __future__ import annotations

from html import escape
from typing import Final

#: page id -> (path, title)
PAGES: Final = {
    "index": ("/debug/", "asched debug"),
    "queue": ("/debug/queue", "Queue"),
    "decisions": ("/debug/decisions", "Decisions"),
    "decision": ("/debug/decision", "Decision"),
    "now": ("/debug/now", "Now"),
}

_NAV: Final = ("queue", "decisions", "now")

_BODIES: Final = {
    "index": """
<p>Read-only views of this scheduler. Every page has its JSON document:</p>
<ul>
  <li><a href="/debug/queue">Queue</a>: pending pods by place
      (<a href="/debug/api/queue">JSON</a>)</li>
  <li><a href="/debug/decisions">Decisions</a>: the last decisions, each with every node's
      verdict (<a href="/debug/api/decisions">JSON</a>;
      one decision: <code>/debug/api/decision?id=N</code> or <code>?pod=NAMESPACE/NAME</code>)</li>
  <li><a href="/debug/now">Now</a>: throughput, latency, binds in flight, the leader
      (<a href="/debug/api/now">JSON</a>)</li>
</ul>""",
    "queue": """
<p id="counts" class="counts"></p>
<p id="note" class="note"></p>
<table id="pods" class="grid"><thead><tr>
  <th>pod</th><th>place</th><th>attempts</th><th>age</th><th>last reason</th><th>rejected by</th>
</tr></thead><tbody></tbody></table>""",
    "decisions": """
<p class="note" id="note"></p>
<table id="decisions" class="grid"><thead><tr>
  <th>#</th><th>time</th><th>pod</th><th>attempt</th><th>result</th><th>examined</th>
  <th>outcome</th>
</tr></thead><tbody></tbody></table>""",
    "decision": """
<div id="summary"></div>
<p class="note">Click a column header to sort.</p>
<table id="nodes" class="grid sortable"><thead><tr></tr></thead><tbody></tbody></table>
<details id="unexamined"><summary></summary><p class="names"></p></details>""",
    "now": """
<div id="facts"></div>
<h2>Pods bound per second (last 5 minutes)</h2>
<div id="chart"></div>
<table id="minute" class="grid"><thead><tr>
  <th>window</th><th>attempts/s</th><th>bound/s</th><th>scheduled</th><th>unschedulable</th>
  <th>errors</th><th>attempt mean</th><th>attempt max</th><th>e2e mean</th><th>e2e max</th>
</tr></thead><tbody></tbody></table>""",
}


def render(page: str) -> str:
    """The HTML shell of ``page`` (a key of :data:`PAGES`)."""
    _, title = PAGES[page]
    links = " ".join(
        f'<a href="{PAGES[name][0]}"{" class=current" if name == page else ""}>'
        f"{escape(PAGES[name][1])}</a>"
        for name in _NAV
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} - asched</title>
<link rel="stylesheet" href="/debug/static/debug.css">
<script src="/debug/static/debug.js" defer></script>
</head><body data-page="{page}">
<nav><a href="/debug/" class="home">asched</a> {links}</nav>
<main><h1 id="title">{escape(title)}</h1>{_BODIES[page]}</main>
</body></html>
"""


CSS: Final = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
nav { background: #263238; padding: 8px 16px; }
nav a { color: #eceff1; margin-right: 16px; text-decoration: none; }
nav a.current, nav a.home { font-weight: bold; }
main { padding: 8px 16px; }
h1 { font-size: 20px; }
h2 { font-size: 16px; }
table.grid { border-collapse: collapse; margin: 8px 0; }
table.grid th, table.grid td { border: 1px solid #cfd8dc; padding: 3px 8px; text-align: left; }
table.grid th { background: #eceff1; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.selected td { background: #c8e6c9; font-weight: bold; }
tr.rejected td { color: #8d3a3a; }
.note { color: #555; }
.counts span { margin-right: 12px; }
.verdict-ok { color: #1b5e20; font-weight: bold; }
.verdict-no { color: #b71c1c; font-weight: bold; }
details .names { font-family: monospace; }
svg rect { fill: #42a5f5; }
svg text { font-size: 10px; fill: #555; }
"""

JS: Final = r"""
"use strict";
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}
function link(href, text) { const a = el("a", text); a.href = href; return a; }
function seconds(value) {
  if (value === null || value === undefined) return "-";
  if (value < 1) return (value * 1000).toFixed(1) + " ms";
  if (value < 120) return value.toFixed(1) + " s";
  if (value < 7200) return (value / 60).toFixed(1) + " min";
  return (value / 3600).toFixed(1) + " h";
}
async function getJSON(url) {
  const response = await fetch(url, {headers: {"Accept": "application/json"}});
  if (!response.ok) throw new Error(url + ": HTTP " + response.status + " " + (await response.text()));
  return response.json();
}
function fail(error) {
  const main = document.querySelector("main");
  main.appendChild(el("p", String(error.message || error), "verdict-no"));
}
function row(cells) {
  const tr = el("tr");
  for (const cell of cells) {
    const td = el("td");
    if (cell instanceof Node) td.appendChild(cell);
    else if (typeof cell === "number") { td.textContent = String(cell); td.className = "num"; }
    else td.textContent = cell === null || cell === undefined ? "" : String(cell);
    tr.appendChild(td);
  }
  return tr;
}
function decisionHref(pod, id) {
  return "/debug/decision?" + (id ? "id=" + id : "pod=" + encodeURIComponent(pod));
}

async function queuePage() {
  const data = await getJSON("/debug/api/queue");
  const counts = document.getElementById("counts");
  counts.replaceChildren();
  for (const [place, count] of Object.entries(data.counts)) {
    counts.appendChild(el("span", place + ": " + count));
  }
  document.getElementById("note").textContent = data.truncated
    ? "showing " + data.pods.length + " of " + data.total + " pending pods" : data.total + " pending pods";
  const body = document.querySelector("#pods tbody");
  body.replaceChildren();
  for (const pod of data.pods) {
    const name = pod.decision ? link(decisionHref(pod.pod, pod.decision), pod.pod) : el("span", pod.pod);
    name.dataset.pod = pod.pod;
    let place = pod.place;
    if (pod.node) place += " (" + pod.node + ")";
    if (pod.backoffLeft !== undefined) place += " (" + seconds(pod.backoffLeft) + " left)";
    const tr = row([name, place, pod.attempts, seconds(pod.age), pod.reason || "", pod.rejectedBy.join(", ")]);
    tr.dataset.place = pod.place;
    body.appendChild(tr);
  }
}

async function decisionsPage() {
  const data = await getJSON("/debug/api/decisions");
  document.getElementById("note").textContent =
    "the last " + data.decisions.length + " decisions (at most " + data.capacity + " kept)";
  const body = document.querySelector("#decisions tbody");
  for (const d of data.decisions) {
    const result = d.selected ? "-> " + d.selected : (d.message || "");
    const examined = d.examined + " of " + d.nodeCount + (d.sampled ? " (sampled)" : "");
    body.appendChild(row([link(decisionHref(d.pod, d.id), "#" + d.id),
      new Date(d.time * 1000).toLocaleTimeString(), d.pod, d.attempt, result, examined, d.outcome]));
  }
}

function sortTable(table, column, numeric, th) {
  const body = table.tBodies[0];
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const rows = Array.from(body.rows);
  const key = (tr) => {
    const text = tr.cells[column].dataset.sort ?? tr.cells[column].textContent;
    if (!numeric) return text;
    return text === "" ? -Infinity : Number(text);
  };
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    const order = numeric ? (x === y ? 0 : (x < y ? -1 : 1)) : String(x).localeCompare(String(y));
    return ascending ? order : -order;
  });
  body.replaceChildren(...rows);
}

async function decisionPage() {
  const query = new URLSearchParams(location.search);
  const d = await getJSON("/debug/api/decision?" + query.toString());
  document.getElementById("title").textContent = "Decision #" + d.id + ": " + d.pod;
  const summary = document.getElementById("summary");
  const verdict = d.selected
    ? el("p", "selected: " + d.selected + (d.top.length > 1 ? " (tied with " + (d.top.length - 1) + " others)" : ""), "verdict-ok")
    : el("p", "unschedulable: " + (d.message || ""), "verdict-no");
  verdict.id = "verdict";
  summary.appendChild(verdict);
  const facts = [
    "profile " + d.profile + ", attempt " + d.attempt + ", at " + new Date(d.time * 1000).toLocaleString(),
    "examined " + d.examined + " of " + d.nodeCount + " nodes" +
      (d.sampled ? " (sampling: percentageOfNodesToScore; the others were not looked at)" : "") +
      (d.nominatedOnly ? " (the nominated node alone: it fits)" : "") +
      ", " + d.feasible + " feasible" + (d.consulted ? ", extenders consulted" : ""),
  ];
  if (d.selected && d.scoredCount === 0) facts.push("one feasible node: chosen without scoring, as upstream");
  if (d.preemption) facts.push("preemption: " + (d.preemption.node ? "nominated " + d.preemption.node +
    ", evicting " + d.preemption.victims.map((v) => v.pod).join(", ")
    : (d.preemption.message || "did not help").replace(/^preemption: /, "")));
  if (d.outcome) facts.push("then: " + d.outcome);
  for (const fact of facts) summary.appendChild(el("p", fact, "note"));

  const plugins = Object.keys(d.weights).filter((p) =>
    Object.values(d.nodes).some((v) => v.feasible && v.scores && p in v.scores));
  const table = document.getElementById("nodes");
  const head = table.tHead.rows[0];
  const columns = [["node", false], ["verdict", false]];
  for (const p of plugins) columns.push([p + " \u00d7" + d.weights[p], true]);
  columns.push(["total", true], ["rejected by", false], ["reason", false]);
  columns.forEach(([name, numeric], index) => {
    const th = el("th", name);
    th.dataset.numeric = numeric ? "1" : "";
    th.addEventListener("click", () => sortTable(table, index, numeric, th));
    head.appendChild(th);
  });
  const entries = Object.entries(d.nodes);
  entries.sort((a, b) => (b[1].feasible - a[1].feasible) || ((b[1].total || 0) - (a[1].total || 0)) || a[0].localeCompare(b[0]));
  const body = table.tBodies[0];
  for (const [name, v] of entries) {
    const cells = [name, v.feasible ? (name === d.selected ? "selected" : "feasible") : "rejected"];
    for (const p of plugins) cells.push(v.feasible && p in (v.scores || {}) ? v.scores[p] : "");
    cells.push(v.feasible && d.scoredCount ? v.total : "");
    cells.push(v.feasible ? "" : (v.plugin || ""));
    cells.push(v.feasible ? "" : (v.reasons || []).join("; "));
    const tr = row(cells);
    tr.dataset.node = name;
    if (name === d.selected) tr.className = "selected";
    else if (!v.feasible) tr.className = "rejected";
    body.appendChild(tr);
  }
  const rest = document.getElementById("unexamined");
  if (d.notExamined.length) {
    rest.querySelector("summary").textContent = d.notExamined.length + " nodes not examined (sampling)";
    rest.querySelector(".names").textContent = d.notExamined.join(" ");
  } else {
    rest.remove();
  }
}

function chart(series) {
  const width = 600, height = 120, bar = width / Math.max(series.length, 1);
  const top = Math.max(1, ...series.map((s) => s.bound));
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", width); svg.setAttribute("height", height + 14);
  series.forEach((s, index) => {
    const h = (s.bound / top) * height;
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", index * bar); rect.setAttribute("y", height - h);
    rect.setAttribute("width", Math.max(bar - 0.5, 0.5)); rect.setAttribute("height", h);
    const title = document.createElementNS(ns, "title");
    title.textContent = s.ago + " s ago: " + s.bound + " bound";
    rect.appendChild(title);
    svg.appendChild(rect);
  });
  const label = document.createElementNS(ns, "text");
  label.setAttribute("x", 0); label.setAttribute("y", height + 12);
  label.textContent = "max " + top + "/s";
  svg.appendChild(label);
  return svg;
}

async function nowPage() {
  const data = await getJSON("/debug/api/now");
  const facts = document.getElementById("facts");
  facts.replaceChildren();
  const leader = data.leader.election
    ? (data.leader.leading ? "this replica leads" : "standby; the lease is held by " + (data.leader.holder || "nobody"))
    : "leader election off";
  const lines = [
    "identity: " + data.identity, "leader: " + leader,
    "binds in flight: " + data.bindsInFlight, "waiting on Permit: " + data.waitingOnPermit,
    "consulting extenders: " + data.consultingExtenders,
    "pending: " + Object.entries(data.pending).map(([k, v]) => k + " " + v).join(", "),
  ];
  for (const line of lines) facts.appendChild(el("p", line));
  document.getElementById("chart").replaceChildren(chart(data.series));
  const body = document.querySelector("#minute tbody");
  body.replaceChildren();
  for (const [label, w] of [["last minute", data.lastMinute], ["last " + data.window.seconds + " s", data.window]]) {
    body.appendChild(row([label, w.attemptsPerSecond.toFixed(1), w.boundPerSecond.toFixed(1), w.scheduled,
      w.unschedulable, w.error, seconds(w.attemptMean), seconds(w.attemptMax), seconds(w.e2eMean), seconds(w.e2eMax)]));
  }
}

const PAGES = {queue: [queuePage, 5000], decisions: [decisionsPage, 0], decision: [decisionPage, 0], now: [nowPage, 2000]};
document.addEventListener("DOMContentLoaded", () => {
  const entry = PAGES[document.body.dataset.page];
  if (!entry) return;
  const [render, every] = entry;
  const run = () => render().then(() => { document.body.dataset.loaded = "1"; }).catch(fail);
  run();
  if (every) setInterval(run, every);
});
"""
