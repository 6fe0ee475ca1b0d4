"use strict";
// A player's limits on their own play (accounts mode): the reality check and the limits
// dialog. Uses table.js's $, money, post, send, say, whoAmI and watch.
const LIMITS = [
  ["deposit-day", "deposits a day", "money"], ["deposit-week", "deposits a week", "money"],
  ["loss-day", "losses a day", "money"], ["loss-week", "losses a week", "money"],
  ["reality-minutes", "reality check every", "minutes"],
  ["session-minutes", "play at most, a login", "minutes"],
];

// "12.5" or "12.50" dollars as whole cents, without a float; null for anything else
function cents(text) {
  const m = /^\s*(\d{1,10})(?:\.(\d{1,2}))?\s*$/.exec(text);
  return m ? Number(m[1]) * 100 + Number((m[2] || "").padEnd(2, "0")) : null;
}
function shown(value, unit) {
  if (value === null || value === undefined) return "none";
  return unit === "money" ? money(value) : `${value} minutes`;
}

// The server refused a wager: the reality check is due. The wager is sent again only if the
// player chooses to keep playing.
function realityCheck(facts, bet) {
  const d = $("reality-dialog");
  const h = Math.floor(facts.minutes / 60), mins = facts.minutes % 60;
  $("reality-minutes").textContent = (h ? `${h} h ` : "") + `${mins} min`;
  $("reality-net").textContent = (facts.net > 0 ? "+" : "") + money(facts.net);
  $("reality-net").className = facts.net < 0 ? "loss" : "win";
  $("reality-every").textContent = facts.every;
  $("reality-go").onclick = () => {
    d.close();
    send({ type: "reality" });
    if (bet) send({ type: "bet", box: bet.box, amount: bet.amount });
  };
  $("reality-leave").onclick = () => { d.close(); send({ type: "reality" }); send({ type: "leave" }); };
  $("reality-limits").onclick = () => { d.close(); send({ type: "reality" }); openLimits(); };
  say("Reality check: your wager waits");
  if (!d.open) d.showModal();
}

async function openLimits() {
  const r = await fetch("/api/limits");
  if (!r.ok) { say("log in to see your limits"); return; }
  const now = await r.json();
  const body = $("limits-table").querySelector("tbody");
  body.innerHTML = "";
  for (const [kind, label, unit] of LIMITS) {
    const row = document.createElement("tr");
    row.dataset.kind = kind;
    const pending = (now.pending || []).find((p) => p.kind === kind);
    const later = pending ? ` (${shown(pending.value, unit)} from ${pending.effective_at.slice(0, 16).replace("T", " ")} UTC)` : "";
    row.innerHTML = `<td></td><td class="now"></td><td><input size="8" aria-label="new ${label}"
      placeholder="${unit === "money" ? "$" : "minutes"}"></td><td><button type="button">Set</button>
      <button type="button" class="none">None</button></td>`;
    row.cells[0].textContent = label;
    row.cells[1].textContent = shown(now.limits[kind], unit) + later;
    const [set, none] = row.querySelectorAll("button");
    set.onclick = () => {
      const text = row.querySelector("input").value;
      const value = unit === "money" ? cents(text) : (/^\s*\d{1,6}\s*$/.test(text) ? Number(text) : null);
      if (!value) { $("limits-message").textContent = `${label}: a whole number${unit === "money" ? " of dollars (cents allowed)" : " of minutes"}`; return; }
      setLimit(kind, value);
    };
    none.onclick = () => setLimit(kind, null);
    body.append(row);
  }
  $("limits-message").textContent = now.paused_until ? `paused until ${now.paused_until}` : "";
  if (!$("limits-dialog").open) $("limits-dialog").showModal();
}

async function setLimit(kind, value) {
  const done = await post("/api/limits", { kind, value });
  if (!done) { $("limits-message").textContent = $("message").textContent; return; }
  await openLimits();
  const at = done.effective_at.slice(0, 16).replace("T", " ");
  $("limits-message").textContent = `${kind}: set, in effect from ${at} UTC`;
}

$("limits-button").addEventListener("click", openLimits);
$("limits-close").addEventListener("click", () => $("limits-dialog").close());
$("pause-button").addEventListener("click", async () => {
  if (!$("pause-sure").checked) { $("limits-message").textContent = "tick \u201cI understand\u201d first"; return; }
  const kind = $("pause-kind").value, days = Number($("pause-days").value);
  const done = await post("/api/pause", { kind, days });
  if (!done) { $("limits-message").textContent = $("message").textContent; return; }
  $("limits-dialog").close();
  say(`${kind} until ${done.until.slice(0, 10)}: you are logged out`);
  token = null;
  if (ws) { ws.close(); ws = null; }
  await whoAmI();
  watch();
});
