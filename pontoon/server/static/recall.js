"use strict";
// Game recall: the player's last ten rounds, or (a supervisor's) any one round by its id.
const money = (c) => (c < 0 ? "-$" : "$") + (Math.abs(c) / 100).toFixed(2);
const params = new URLSearchParams(location.search);

function query(keys) {
  const q = new URLSearchParams();
  keys.forEach((k) => { if (params.get(k)) q.set(k, params.get(k)); });
  const s = q.toString();
  return s ? "?" + s : "";
}

function spot(label, cards, total) {
  const d = el("div", "spot");
  d.append(el("div", "label", label), cardsEl(cards));
  if (total !== undefined) d.append(el("div", "total", String(total)));
  return d;
}

function balances(r) {
  const rows = r.players ? Object.entries(r.players) : [[params.get("player") || "you", r]];
  return rows.map(([p, b]) =>
    `${p}: ${money(b.balance_before)} before, ${money(b.balance_after)} after ` +
    `(net ${b.net >= 0 ? "+" : ""}${money(b.net)}, ${b.balance_of === "wallet" ? "wallet" : "at the table"})`
  ).join("; ");
}

function roundEl(r) {
  const s = el("section", "round");
  s.dataset.round = r.round;
  s.append(el("h2", "", `Recall of round ${r.round}: table ${r.table}, round ${r.number} ` +
    `(${r.rules}), ${r.status}, started ${r.started_at.slice(0, 19).replace("T", " ")} UTC`));
  s.append(el("div", "note balance", balances(r)));
  const layout = el("div", "layout");
  const res = r.result || {};
  if (res.dealer) layout.append(spot("Dealer", res.dealer.cards, res.dealer.total));
  (res.boxes || []).forEach((b) => b.hands.forEach((h, i) => {
    const who = h.wagers.map((w) => `${w.player} ${money(w.amount)} ${w.outcome || ""}`).join(", ");
    layout.append(spot(`Box ${b.box}${b.hands.length > 1 ? " hand " + (i + 1) : ""}: ${who}`,
      h.cards, h.total));
  }));
  s.append(layout);
  const steps = el("ol", "steps");
  r.events.forEach((e) => {
    const li = el("li", "", e.text);
    if (e.rule && e.kind !== "rules") li.append(el("span", "rule", ` (rule ${e.rule})`));
    steps.append(li);
  });
  s.append(steps);
  if (!r.reconstructed) s.append(el("div", "error", "the engine's replay differs from this record"));
  return s;
}

async function load() {
  const id = params.get("round");
  const t = params.get("table");  // demo mode: the table page keeps the token in this tab
  if (t && !params.get("token")) params.set("token", sessionStorage.getItem("pontoon-token-" + t) || "");
  const path = id ? `/api/recall/${encodeURIComponent(id)}${query(["token"])}`
    : `/api/recall${query(["table", "token"])}`;
  const r = await fetch(path);
  const doc = await r.json();
  if (!r.ok) { $("error").textContent = doc.detail || doc.error || r.statusText; return; }
  $("who").textContent = doc.player ? `${doc.player}'s last ${doc.rounds.length} round(s)`
    : `round ${id}`;
  if (!doc.rounds.length) $("error").textContent = "no round played yet";
  doc.rounds.forEach((x) => $("rounds").append(roundEl(x)));
}
load();
