"use strict";
// The strategy drill page: every decision graded by the server against the exact analysis.
const LABELS = { hit: "Hit", stand: "Stand", double: "Double", split: "Split",
  surrender: "Surrender", rescue: "Rescue" };
let drill = null, decisions = 0, right = 0, lost = 0;
let me = null;  // accounts mode: {name, csrf} of the logged-in account (the drill is kept under it)

function per100(cost) { return "$" + (cost * 100).toFixed(2); }

async function post(url, body) {
  const headers = { "content-type": "application/json" };
  if (me) { headers["X-CSRF-Token"] = me.csrf; }
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  const doc = await r.json();
  if (r.status === 401) { loggedOut(); }
  if (!r.ok) {
    const why = doc.error || (typeof doc.detail === "string" ? doc.detail : JSON.stringify(doc.detail));
    throw new Error(why || String(r.status));
  }
  return doc;
}

function loggedOut() {
  // accounts mode without a session: the drill is for logged-in accounts
  me = null;
  $("start-button").disabled = true;
  $("who").replaceChildren("Log in at ", Object.assign(el("a", "", "the table"), { href: "/" }),
    " to drill: your decisions are kept under your account.");
}

function show(doc) {
  const box = $("messages");
  box.replaceChildren(...(doc.messages || []).filter((m) => m.trim()).map((m) => el("li", "", m)));
  if (doc.grade) { grade(doc.grade); }
  const q = doc.question;
  $("actions").replaceChildren();
  if (q) {
    $("dealer-cards").replaceChildren(cardEl(q.dealer));
    $("hand-cards").replaceChildren(...q.cards.map(cardEl));
    $("hand-total").textContent = q.prompt.split("(")[1].split(")")[0] + (q.doubled ? ", doubled" : "");
    for (const a of q.legal) {
      const b = el("button", "", LABELS[a] || a);
      b.dataset.action = a;
      b.addEventListener("click", () => answer(a));
      $("actions").append(b);
    }
  }
  if (doc.summary) { summary(doc.summary); }
  document.body.dataset.version = String(Number(document.body.dataset.version || 0) + 1);
}

function grade(g) {
  decisions += 1;
  const box = $("grade");
  if (g.correct) {
    right += 1;
    box.className = "right";
    box.textContent = `${g.hand} against ${g.dealer}: ${g.answer} is right` +
      (g.chart !== g.best ? ` (the chart plays ${g.chart})` : "") + ".";
  } else {
    lost += g.cost;
    box.className = "wrong";
    box.textContent = `${g.hand} against ${g.dealer}: ${g.answer} is wrong. The best play is ` +
      `${g.best}: ${g.answer} costs ${per100(g.cost)} per $100 wagered` +
      (g.chart !== g.best ? ` (the chart plays ${g.chart})` : "") + ".";
  }
  $("score").textContent = `${right} of ${decisions} right; EV lost ` +
    `${(100 * lost / decisions).toFixed(2)} wagers per 100 decisions`;
}

function summary(s) {
  document.body.dataset.state = "over";
  $("summary").hidden = false;
  const n = s.decisions.length;
  $("summary-line").textContent = n ? `${n} decisions, ${Math.round(100 * s.accuracy)}% right; ` +
    `EV lost ${s.ev_lost_per_100.toFixed(2)} wagers per 100 decisions.` : "No decisions.";
  const rows = s.costliest.map((d) => {
    const tr = el("tr");
    for (const v of [d.hand, d.dealer, d.answer, d.best, per100(d.cost)]) { tr.append(el("td", "", v)); }
    return tr;
  });
  $("costliest").querySelector("tbody").replaceChildren(...rows);
  $("actions").replaceChildren();
}

async function answer(a) {
  $("actions").querySelectorAll("button").forEach((b) => { b.disabled = true; });
  try { show(await post(`/api/train/${drill}`, { answer: a })); } catch (e) { $("grade").textContent = e.message; }
}

async function start(ev) {
  ev.preventDefault();
  decisions = 0; right = 0; lost = 0;
  $("summary").hidden = true;
  $("grade").className = "";
  $("grade").textContent = "Working out the optimal chart...";
  $("score").textContent = "";
  document.body.dataset.state = "playing";
  const body = { rules: $("rules").value, mode: $("mode").value, hands: Number($("hands").value) };
  if ($("seed").value !== "") { body.seed = Number($("seed").value); }
  if (!me && $("learner").value.trim()) { body.learner = $("learner").value.trim(); }
  try {
    const doc = await post("/api/train", body);
    drill = doc.id;
    $("grade").textContent = "";
    show(doc);
  } catch (e) { $("grade").textContent = e.message; document.body.dataset.state = "idle"; }
}

async function init() {
  const r = await fetch("/api/train/options");
  const o = await r.json();
  $("rules").replaceChildren(...o.rules.map((n) => { const x = el("option", "", n); x.value = n; return x; }));
  $("mode").replaceChildren(...o.modes.map((n) => { const x = el("option", "", n); x.value = n; return x; }));
  $("start").addEventListener("submit", start);
  if (o.accounts) {  // the drill is kept under the logged-in account, never a name typed here
    $("learner").hidden = true;
    const r2 = await fetch("/api/me");
    if (!r2.ok) { loggedOut(); return; }
    me = await r2.json();
    $("who").textContent = `Kept under your account, ${me.name}.`;
  }
}
init();
