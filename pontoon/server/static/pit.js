"use strict";
// The pit boss's report: tables, periods and players against theory, and the plot.
const money = (c) => (c < 0 ? "-$" : "$") + (Math.abs(c) / 100).toFixed(2);
const pct = (x) => (x === null ? "" : (x * 100).toFixed(2) + " %");
const token = new URLSearchParams(location.search).get("token");
const COLS = ["rounds", "wagered", "win", "hold", "theory", "95 % band", "z", ""];

function row(label, f, cls) {
  const tr = el("tr", (cls || "") + (f.flagged ? " flagged" : ""));
  const band = f.rounds ? `${money(f.band95[0])} to ${money(f.band95[1])}` : "";
  [label, f.rounds, money(f.wagered), money(f.win), pct(f.hold), money(f.theoretical_win), band,
    f.z].forEach((v) => tr.append(el("td", "", String(v))));
  const flag = el("td");
  if (f.flagged) flag.append(el("span", "flag", "FLAGGED"));
  tr.append(flag);
  return tr;
}

function tableEl(t) {
  const sec = el("section", "report-table");
  sec.dataset.table = t.table;
  sec.append(el("h2", "", `Table ${t.table} (${t.rules.join(", ")})` +
    (t.void_rounds ? `: ${t.void_rounds} void round(s) apart` : "")));
  const tab = el("table");
  const head = el("tr");
  ["", ...COLS].forEach((c) => head.append(el("th", "", c)));
  tab.append(head, row("all", t, "total"));
  t.periods.forEach((p) => tab.append(row(p.period, p)));
  const ph = el("tr");
  ["players", ...COLS].forEach((c) => ph.append(el("th", "", c)));
  tab.append(ph);
  t.players.forEach((p) => tab.append(row(p.player, p)));
  sec.append(tab);
  return sec;
}

function ask() {
  const q = new URLSearchParams();
  for (const k of ["table", "from", "to", "period"]) if ($(k).value) q.set(k, $(k).value);
  if (token) q.set("token", token);
  return q.toString();
}

async function report(ev) {
  if (ev) ev.preventDefault();
  $("error").textContent = "";
  const q = ask();
  const r = await fetch("/api/report?" + q);
  const doc = await r.json();
  if (!r.ok) { $("error").textContent = doc.detail || doc.error || r.statusText; return; }
  $("theory").textContent = doc.theory.map((t) =>
    `${t.rules}: house edge ${(t.edge * 100).toFixed(4)} %, variance ${t.variance.toFixed(4)}, ` +
    `covariance ${t.covariance.toFixed(4)} per box (${t.precision})`).join("; ") +
    ". The band: 95 % of wins fall in it (a normal approximation); a flag asks for a look.";
  $("report").replaceChildren(...doc.tables.map(tableEl));
  if (!doc.tables.length) $("report").append(el("p", "note", "no finished rounds"));
  $("plot").hidden = !doc.tables.length;
  if (doc.tables.length) $("plot").src = "/api/report.png?" + q;
}

// ------------------------------------------------------------------ the tables
let csrf = null;  // accounts mode: every change carries the login's CSRF token
async function change(name, body) {
  const headers = { "Content-Type": "application/json" };
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const r = await fetch(`/api/pit/tables/${encodeURIComponent(name)}` + (token ? `?token=${encodeURIComponent(token)}` : ""),
    { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await r.json().catch(() => ({}));
  $("error").textContent = r.ok ? "" : (typeof answer.detail === "string" ? answer.detail : `refused (${r.status})`);
  tablesPanel();
}
function tableRow(t) {
  const tr = el("tr");
  tr.dataset.table = t.table;
  const low = el("input"), high = el("input");
  for (const [i, v] of [[low, t.table_min], [high, t.table_max]]) { i.type = "number"; i.min = "1"; i.value = v; i.className = "cents"; }
  low.setAttribute("aria-label", `${t.table} minimum (cents)`);
  high.setAttribute("aria-label", `${t.table} maximum (cents)`);
  const toggle = el("button", "toggle", t.open ? "Close" : "Open");
  toggle.addEventListener("click", () => change(t.table, { open: !t.open }));
  const set = el("button", "set-limits", "Set limits");
  set.addEventListener("click", () => change(t.table, { table_min: Number(low.value), table_max: Number(high.value) }));
  const status = (t.open ? "open" : "closed") + (t.in_play ? ", a round in play" : "") +
    (t.players.length ? `, ${t.players.length} player(s)` : "");
  const cells = [el("td", "", t.table), el("td", "status", status), el("td"), el("td"), el("td"), el("td")];
  cells[2].append(low); cells[3].append(high); cells[4].append(set); cells[5].append(toggle);
  tr.append(...cells);
  return tr;
}
async function tablesPanel() {
  const r = await fetch("/api/pit/tables" + (token ? `?token=${encodeURIComponent(token)}` : ""));
  if (!r.ok) { $("tables-panel").hidden = true; return; }
  const head = $("tables").rows[0];
  $("tables").replaceChildren(head, ...(await r.json()).map(tableRow));
}
// ------------------------------------------------------------------ the disputes
// Open disputes with an operator's wallet: a rollback or credit it refused or never confirmed
// (none outside operator mode: the panel stays hidden).
async function disputesPanel() {
  const r = await fetch("/api/pit/disputes" + (token ? `?token=${encodeURIComponent(token)}` : ""));
  const found = r.ok ? await r.json() : [];
  $("disputes-panel").hidden = !found.length;
  const head = $("disputes").rows[0];
  $("disputes").replaceChildren(head, ...found.map((d) => {
    const tr = el("tr", "flagged");
    tr.dataset.key = d.key;
    [`${d.kind} ${d.key}`, d.player, money(d.amount), d.table, d.since.slice(0, 19).replace("T", " "),
      d.tries, d.error || "no answer", (d.next_try || "").slice(0, 19).replace("T", " ")]
      .forEach((v) => tr.append(el("td", "", String(v))));
    return tr;
  }));
}
(async () => {
  const me = await fetch("/api/me");
  if (me.ok) csrf = (await me.json()).csrf;
  tablesPanel();
  disputesPanel();
})();

$("ask").addEventListener("submit", report);
$("find").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const id = $("round").value;
  if (id) location.href = `/recall?round=${encodeURIComponent(id)}` + (token ? `&token=${encodeURIComponent(token)}` : "");
});
report();
