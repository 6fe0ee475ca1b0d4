"use strict";
// The Pontoon table page: one WebSocket to the server, everything drawn from its state.
const CHIPS = [500, 1000, 2500, 5000];
// a key's actions, the first legal one taken (surrender and rescue are never both legal)
const KEYS = { h: ["hit"], s: ["stand"], d: ["double"], p: ["split"], r: ["surrender", "rescue"],
  i: ["insure"], n: ["no-insurance", "decline"] };
const LABELS = WORDS.actions;
let ws = null, state = null, table = null, token = null, chip = 1000, endsAt = null, chart = null;
let seq = 0, sent = {}, answered = 0;
// accounts mode: people log in; the socket and requests carry the session's cookie (no token)
const COOKIE = "cookie";
let accounts = false, me = null;  // me: {name, role, balance, csrf} of the logged-in account

function money(c) { return (c < 0 ? "-$" : "$") + (Math.abs(c) / 100).toFixed(2); }
function say(text) { $("message").textContent = text || ""; }

async function loadTables() {
  const tables = await (await fetch("/api/tables")).json();
  const sel = $("table-name");
  sel.innerHTML = "";
  for (const t of tables) {
    const o = el("option", "", `${t.name} (${money(t.rules.table_min)}–${money(t.rules.table_max)})`);
    o.value = t.name;
    sel.append(o);
  }
  // the form waits for the list: a name sent before it came named no table
  $("join-button").disabled = !tables.length;
  const params = new URLSearchParams(location.search);
  if (params.get("table")) sel.value = params.get("table");
  const sup = params.get("supervisor");
  if (sup) {
    // the token leaves the address bar (history, bookmarks, a shared screen) once read: the
    // tab keeps it, as a player's, in its session storage
    params.delete("supervisor");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    sessionStorage.setItem("pontoon-token-" + sel.value, sup);
    connect(sel.value, sup);
    return;
  }
  if (accounts) { if (me) connect(sel.value, COOKIE); else watch(); return; }
  const saved = sessionStorage.getItem("pontoon-token-" + sel.value);
  if (saved) connect(sel.value, saved);
  else watch();
}

// ------------------------------------------------------------------ accounts
async function whoAmI() {
  const r = await fetch("/api/me");
  me = r.ok ? await r.json() : null;
  $("login").hidden = !!me;
  $("account").hidden = !me;
  const wallet = me && me.role === "player" ? ` · wallet ${money(me.balance)}` : "";
  $("account-name").textContent = me ? `${me.name} (${me.role})${wallet}` : "";
  $("pit-link").hidden = !(me && ["supervisor", "pitboss"].includes(me.role));
  $("limits-button").hidden = !(me && me.role === "player");
}
async function post(path, body) {
  const headers = body ? { "Content-Type": "application/json" } : {};
  if (me) headers["X-CSRF-Token"] = me.csrf;
  const r = await fetch(path, { method: "POST", headers, body: body ? JSON.stringify(body) : undefined });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) say(typeof answer.detail === "string" ? answer.detail : `refused (${r.status})`);
  return r.ok ? answer : null;
}
async function logIn(register) {
  const body = { name: $("login-name").value.trim(), password: $("login-password").value };
  if (register && !(await post("/api/accounts", body))) return;
  if (!(await post("/api/login", body))) return;
  $("login-password").value = "";
  say("");
  await whoAmI();
  connect($("table-name").value, COOKIE);  // a player who has not joined goes on watching
}
$("login").addEventListener("submit", (ev) => { ev.preventDefault(); logIn(false); });
$("register-button").addEventListener("click", () => logIn(true));
$("logout-button").addEventListener("click", async () => {
  if (!(await post("/api/logout"))) return;
  token = null;
  if (ws) { ws.close(); ws = null; }
  await whoAmI();
  watch();
});

// Before sitting down the table is watched: its boxes (the empty ones are seats to take),
// the dealer and the play, from the state a watcher gets, refreshed every two seconds.
let watching = null;
async function watch() {
  const t = $("table-name").value;
  if (!t || ws) return;
  table = t;
  const r = await fetch(`/api/tables/${encodeURIComponent(t)}/state`);
  if (r.ok && !ws) { state = await r.json(); render(); }
  clearTimeout(watching);
  watching = setTimeout(watch, 2000);
}
$("table-name").addEventListener("change", () => { chart = null; watch(); loadHistory(); });

$("join").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const t = $("table-name").value, name = $("player-name").value.trim();
  if (accounts) {  // the logged-in player sits down; the wallet stands behind the wagers
    if (await post(`/api/tables/${t}/join`)) connect(t, COOKIE);
    return;
  }
  const r = await fetch(`/api/tables/${t}/join`, { method: "POST",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }) });
  const body = await r.json();
  if (!r.ok) { say(typeof body.detail === "string" ? body.detail : "choose a name: letters, digits, - or _"); return; }
  sessionStorage.setItem("pontoon-token-" + t, body.token);
  connect(t, body.token);
});

function connect(t, tok) {
  clearTimeout(watching);
  table = t; token = tok;
  $("recall-link").hidden = false;  // game recall: the token stays in this tab's storage
  $("recall-link").href = tok === COOKIE ? "/recall" : `/recall?table=${encodeURIComponent(t)}`;
  if (ws) ws.close();
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const query = tok === COOKIE ? "" : `?token=${encodeURIComponent(tok)}`;
  const sock = ws = new WebSocket(`${proto}//${location.host}/ws/${t}${query}`);
  ws.onmessage = (ev) => {
    if (ws !== sock) return;  // a socket this page has replaced or let go of
    const m = JSON.parse(ev.data);
    // the server's answers to this page's messages, counted (the state they made comes
    // first): what a test, or a tool driving the page, waits on
    if (m.type === "ok" || m.type === "error") document.body.dataset.answered = String(++answered);
    if (m.type === "state") { state = m; render(); }
    else if (m.type === "error") {
      if (tok === COOKIE && m.code === "auth") return;  // logged in, not at this table: watch
      say((m.rule ? `rule ${m.rule}: ` : "") + m.error);
      // the reality check the player set: time played and net, acknowledged before a wager
      if (m.code === "reality") realityCheck(m.reality, sent[m.ref]);
      if (m.code === "auth") { sessionStorage.removeItem("pontoon-token-" + t); }
    } else if (m.type === "left" || (m.type === "ok" && m.cashed_out !== undefined)) {
      // left, from this tab or another: back to watching
      sessionStorage.removeItem("pontoon-token-" + t);
      token = null; ws = null;
      say(WORDS.left(accounts ? null : m.cashed_out));
      if (accounts) whoAmI();
      watch();
    } else if (m.type === "ok") { say(""); }
  };
  ws.onclose = (ev) => {
    // left the table, logged out, or another socket took over (in accounts mode every
    // socket's token is the cookie: the socket itself says which one this page holds)
    if (ws !== sock) return;
    // refused, throttled, or replaced by a newer socket of the session (4409): no reconnecting
    if ([4401, 4409, 4429].includes(ev.code)) { token = null; ws = null; watch(); return; }
    setTimeout(() => { if (ws === sock) connect(t, tok); }, 1000);
  };
  loadHistory();
}

function send(msg) {
  if (!ws || ws.readyState !== 1) { say("not connected"); return; }
  msg.id = `${Date.now().toString(36)}-${++seq}`;
  if (msg.type === "bet") sent = { [msg.id]: msg };  // a wager a reality check holds back
  ws.send(JSON.stringify(msg));
}

$("leave-button").addEventListener("click", () => send({ type: "leave" }));

function act(move) {
  const m = { type: "act", action: move.action, box: move.box, v: state.version };
  if (move.follow !== null && move.follow !== undefined) m.follow = move.follow;
  if (move.hand !== null && move.hand !== undefined) m.hand = move.hand;
  send(m);
}

function render() {
  const s = state;
  const watcher = s.role === "watcher";
  if (!watcher) {  // a watcher's page keeps its join form, and no version: it is not at the table
    document.body.dataset.version = s.version;
    document.body.dataset.phase = s.phase;
  }
  $("join").hidden = !watcher || (accounts && (!me || me.role !== "player"));
  if (accounts && me && s.you === me.name && s.role === "player") {
    $("account-name").textContent = `${me.name} (${me.role}) · wallet ${money(s.balance)}`;
  }
  const staff = ["dealer", "pitboss", "cashier"].includes(s.role);
  $("me").textContent = s.role === "supervisor" ? WORDS.me.supervisor(s.table)
    : staff ? WORDS.me.staff(s.you, s.role, s.table, s.round)
    : watcher ? WORDS.me.watching(s.table, s.round) : WORDS.me.player(s.you, s.table, s.round);
  $("supervisor").hidden = s.role !== "supervisor";
  $("leave-button").hidden = s.role !== "player";
  // dealer
  const dc = $("dealer-cards");
  dc.replaceWith(Object.assign(cardsEl(s.dealer.cards, s.dealer.hole), { id: "dealer-cards" }));
  $("dealer-total").textContent = s.dealer.cards.length ? s.dealer.text || `${s.dealer.total}` : "";
  // boxes: every box of the layout
  const aw = s.awaiting;
  const boxes = $("boxes");
  boxes.innerHTML = "";
  const byNo = Object.fromEntries(s.boxes.map((b) => [b.box, b]));
  for (let n = 1; n <= s.rules.boxes; n++) {
    const b = byNo[n];
    const d = el("div", b ? "box" : "box empty");
    d.dataset.box = n;
    d.append(el("div", "box-no", WORDS.box(n, b ? b.seated : null)));
    const betting = s.phase === "betting" || s.phase === "idle" || s.phase === "over";
    if (!b) d.append(el("div", "seat", betting && !watcher ? WORDS.seat.open : WORDS.seat.empty));
    if (b) {
      if (b.players.includes(s.you)) d.classList.add("mine");
      if (aw && aw.box === n) d.classList.add("turn");
      const hands = b.hands.length ? b.hands : [{ cards: [], total: 0, wagers:
        b.players.map((p) => ({ player: p, stake: b.original[p], double: 0 })) }];
      hands.forEach((h, i) => {
        const hd = el("div", "hand" + (aw && aw.box === n && aw.hand === i ? " current" : ""));
        hd.append(cardsEl(h.cards));
        if (h.cards.length) hd.append(el("div", "total", h.text || `${h.total}`));
        const ws_ = el("div", "wagers");
        for (const w of h.wagers) {
          const t = el("span", "wager" + (w.outcome ? ` outcome-${w.outcome}` : ""));
          t.append(el("span", "", w.player + " "), el("span", "amt", money(w.stake + (w.double || 0))));
          if (w.outcome) t.append(el("span", "", ` ${w.outcome}`));
          ws_.append(t);
        }
        hd.append(ws_);
        d.append(hd);
      });
      const ins = Object.entries(b.insurance || {});
      if (ins.length) d.append(el("div", "wager", "insured: " + ins.map(([p, a]) => `${p} ${money(a)}`).join(", ")));
    }
    d.tabIndex = 0;  // a box is a control: reached by Tab, pressed by Enter or Space
    d.setAttribute("role", "button");
    d.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); d.click(); }
    });
    d.addEventListener("click", () => {
      if (watcher) { say("type your name and sit down first"); $("player-name").focus(); return; }
      if (s.role === "player" && (s.phase === "betting" || s.phase === "idle" || s.phase === "over")) {
        send({ type: "bet", box: n, amount: chip });
      }
    });
    boxes.append(d);
  }
  // whose turn, countdown
  let turn = "";
  if (watcher && !aw) {
    turn = !accounts ? WORDS.turn.named : me ? WORDS.turn.sitDown : WORDS.turn.logIn;
  }
  else if (s.phase === "idle" || s.phase === "over") turn = WORDS.turn.bets;
  else if (aw) {
    const who = aw.players.join(", ");
    turn = (WORDS.turn.kinds[aw.kind] || ((_box, w) => w))(aw.box, who, aw.follow);
    if (aw.players.includes(s.you)) turn = WORDS.turn.yours + turn;
  }
  $("turn").textContent = turn;
  endsAt = s.deadline_ms === null ? null : Date.now() + s.deadline_ms;
  if (!watcher) { announce(heard, s); heard = s; }
  // result
  const res = Object.entries(s.result || {});
  $("result").textContent = s.phase === "over" && res.length
    ? res.map(([p, n]) => `${p} ${n >= 0 ? "+" : ""}${money(n)}`).join(" · ") : "";
  // chips, actions
  const chips = $("chips");
  chips.innerHTML = "";
  if (s.role === "player") {
    for (const c of CHIPS) {
      if (c < s.rules.table_min || c > s.rules.table_max) continue;
      const b = el("button", `chip c${c}` + (c === chip ? " selected" : ""), money(c).replace(".00", ""));
      b.type = "button";
      b.dataset.chip = c;
      b.setAttribute("aria-pressed", c === chip ? "true" : "false");
      b.setAttribute("aria-label", WORDS.chip(money(c)));
      b.addEventListener("click", () => { chip = c; render(); });
      chips.append(b);
    }
    if (!CHIPS.some((c) => c === chip)) chip = CHIPS[0];
    if (chip < s.rules.table_min) chip = s.rules.table_min;
  }
  const actions = $("actions");
  actions.innerHTML = "";
  const mine = s.boxes.some((b) => b.players.includes(s.you));
  if (s.phase === "betting" && (mine || s.role === "dealer")) {  // 8.2: no more bets
    const b = el("button", "", WORDS.deal + " ");
    b.dataset.action = "deal";
    b.append(el("kbd", "", "Enter"));
    b.addEventListener("click", () => send({ type: "deal" }));
    actions.append(b);
  }
  for (const m of s.legal) {
    const key = Object.keys(KEYS).find((k) => KEYS[k].includes(m.action));
    let label = LABELS[m.action] || m.action;
    if (m.follow !== null && m.follow !== undefined) label += m.follow === "both" ? " (both hands)" : ` (hand ${m.follow + 1})`;
    if (s.legal.filter((x) => x.action === m.action).length > 1 && m.follow === null) label += ` box ${m.box}`;
    const b = el("button", "", label + " ");
    b.dataset.action = m.action;
    b.dataset.box = m.box;
    if (m.follow !== null) b.dataset.follow = m.follow;
    if (key) b.append(el("kbd", "", key));
    b.addEventListener("click", () => act(m));
    actions.append(b);
  }
  const focus = boxes.querySelector(".box.turn") || boxes.querySelector(".box.mine");
  if (focus && boxes.scrollWidth > boxes.clientWidth) {  // (a narrow screen: the row scrolls)
    boxes.scrollLeft = focus.offsetLeft - (boxes.clientWidth - focus.offsetWidth) / 2;
  }
  renderHint();
  // players, log
  const pl = $("players");
  pl.innerHTML = "";
  for (const [p, info] of Object.entries(s.players)) {
    // a balance is shown to its player alone (and to the supervisor): others see names
    const cents = p === s.you ? s.balance : (s.balances || {})[p];
    const bal = cents == null ? "" : `: ${money(cents)}`;
    pl.append(el("li", "", `${p}${bal}${info.connected ? "" : " (away)"}`));
  }
  const log = $("log");
  log.innerHTML = "";
  for (const e of s.events) {
    if (["stake", "rules"].includes(e.kind)) continue;
    log.append(el("li", "", e.text));
  }
  log.scrollTop = log.scrollHeight;
  renderFairness(s.fairness);
  if (s.phase === "over" && lastHistory !== s.round) { lastHistory = s.round; loadHistory(); }
}
let lastHistory = null;

// ------------------------------------------------------------------ the live region
// What a player at the table would hear from the dealer (words.js), said once: each card as it
// comes and to whom, the totals, whose turn it is and the time to decide, an offer, the end
// of the betting, and each player's result. The region is polite: it waits for a pause.
let heard = null;  // the state last announced

function newCards(before, after) {
  const same = before && before.length <= after.length && before.every((c, i) => c === after[i]);
  return same ? after.slice(before.length) : after;
}

function announce(prev, s) {
  const lines = [];
  const same = prev && prev.round === s.round && prev.table === s.table;
  const fresh = newCards(same ? prev.dealer.cards : [], s.dealer.cards);
  fresh.forEach((c) => lines.push(WORDS.toDealer(cardName(c))));
  if (fresh.length) lines.push(WORDS.dealerTotal(s.dealer.text || `${s.dealer.total}`));
  const had = {};
  if (same) for (const b of prev.boxes) b.hands.forEach((h, i) => { had[`${b.box}/${i}`] = h.cards; });
  for (const b of s.boxes) {
    const split = b.hands.length > 1 ? 0 : null;
    b.hands.forEach((h, i) => {
      const dealt = newCards(had[`${b.box}/${i}`] || [], h.cards);
      const hand = split === null ? null : i;
      dealt.forEach((c) => lines.push(WORDS.toBox(cardName(c), b.box, hand)));
      if (dealt.length) lines.push(WORDS.boxTotal(b.box, hand, h.text || `${h.total}`));
    });
  }
  if (same && prev.phase === "betting" && s.phase !== "betting") lines.push(WORDS.noMoreBets);
  const aw = s.awaiting, was = same ? prev.awaiting : null;
  if (aw && JSON.stringify(aw) !== JSON.stringify(was) && aw.kind !== "betting") {
    const what = $("turn").textContent.replace(WORDS.turn.yours, "");
    const seconds = s.deadline_ms === null ? null : Math.ceil(s.deadline_ms / 1000);
    if (aw.players.includes(s.you)) {
      if (aw.kind === "insurance" || s.legal.some((m) => m.action === "insure")) lines.push(WORDS.offer.insurance);
      if (aw.kind === "follow") lines.push(WORDS.offer.follow(aw.follow));
      if (aw.kind === "choose") lines.push(WORDS.offer.choose);
      lines.push(WORDS.yourTurn(what, seconds));
    } else lines.push(WORDS.theirTurn(what));
  }
  if (s.phase === "over" && !(same && prev.phase === "over")) {
    for (const [p, n] of Object.entries(s.result || {})) lines.push(WORDS.outcome(p, n));
    if (s.role === "player" && s.balance != null) lines.push(WORDS.balance(s.balance));
    if (s.role === "player") lines.push(WORDS.betsOpen);
  } else if (s.phase === "idle" && !(prev && prev.phase === "idle")) lines.push(WORDS.betsOpen);
  if (lines.length) $("announce").textContent = lines.join(". ") + ".";
}

// ------------------------------------------------------------------ the shoe's commitment
// Each shoe is committed to (the SHA-256 of its order and a secret salt) before its first
// card leaves it, and revealed when it ends (docs/operators/fairness.md). The page notes every
// commitment it was shown, and checks a revealed shoe itself (shoecheck.js).
const shownCommitments = new Set();
let revealedKey = "";
function renderFairness(f) {
  if (!f) return;
  if (f.commitment) shownCommitments.add(f.commitment);
  $("commitment").textContent = f.commitment || "none (the next shuffle commits)";
  const key = table + " " + f.revealed.map((r) => r.seq).join(",");
  if (key === revealedKey) return;  // (a check's result stays on the page)
  revealedKey = key;
  const ul = $("revealed");
  ul.innerHTML = "";
  for (const r of [...f.revealed].reverse()) {
    const li = el("li", "", `revealed at event ${r.seq}: ${r.commitment.slice(0, 16)}… `);
    const b = el("button", "", "check");
    b.dataset.seq = r.seq;
    b.addEventListener("click", () => checkShoe(r.seq));
    li.append(b);
    ul.append(li);
  }
}
async function checkShoe(seq) {
  const out = $("shoe-check");
  out.textContent = "checking…";
  const r = await fetch(`/api/tables/${encodeURIComponent(table)}/shoes/${seq}`);
  const doc = await r.json();
  if (!r.ok) { out.textContent = typeof doc.detail === "string" ? doc.detail : `refused (${r.status})`; return; }
  out.textContent = await shoeVerdict(doc, shownCommitments);
  out.dataset.seq = seq;
}

// ------------------------------------------------------------------ strategy hint
function cardValue(code) { return code[0] === "A" ? 1 : "TJQK".includes(code[0]) ? 10 : Number(code[0]); }
// The best total of a hand: an ace counts 11 where that does not bust it (a soft total).
function bestTotal(cards) {
  const vals = cards.map(cardValue), hard = vals.reduce((a, b) => a + b, 0);
  const soft = vals.includes(1) && hard + 10 <= 21;
  return { total: soft ? hard + 10 : hard, soft };
}
function handRow(cards) {
  const vals = cards.map(cardValue);
  if (cards.length === 2 && vals[0] === vals[1]) return vals[0] === 1 ? "PA" : vals[0] === 10 ? "PT" : `P${vals[0]}`;
  const { total: t, soft } = bestTotal(cards);
  if (t >= 21) return null;
  return soft ? `S${Math.max(12, t)}` : `H${Math.max(4, t)}`;
}
const HINTS = { H: "hit", S: "stand", D: "double (else hit)", Ds: "double (else stand)",
  P: "split", R: "surrender (else hit)", Rs: "surrender (else stand)", Rp: "surrender (else split)" };
// The chart's advice for a hand in turn against the dealer's first card `up`, as
// "hint: ... (row v up)", or "" where the chart has none. A doubled hand still open after its
// card (12, double_rescue) is rescued or stands: by its rescue row X6...X20 (the best total,
// soft or hard alike) when the chart has them, else rescued where its total's row surrenders
// first (R, Rs) -- as pontoon.analysis.chart.Chart.rescues reads a chart.
function hintText(cells, hand, up) {
  let row = handRow(hand.cards);
  if (hand.doubled && row && cells.X6) row = `X${bestTotal(hand.cards).total}`;
  const code = row && cells[row] ? cells[row][cardValue(up) - 1] : null;
  if (!code) return "";
  const advice = !hand.doubled ? HINTS[code] || code
    : ["R", "Rs"].includes(code) ? "rescue" : "stand";
  return `hint: ${advice} (${row} v ${up[0]})`;
}
async function renderHint() {
  const out = $("hint");
  out.textContent = "";
  const s = state;
  if (!$("hint-toggle").checked || !s || !s.awaiting || s.awaiting.kind !== "decide") return;
  if (!s.awaiting.players.includes(s.you) || !s.dealer.cards.length) return;
  if (!chart) {
    out.textContent = "hint: working it out…";
    chart = await (await fetch(`/api/tables/${table}/chart`)).json();
  }
  const box = s.boxes.find((b) => b.box === s.awaiting.box);
  out.textContent = hintText(chart.cells, box.hands[s.awaiting.hand], s.dealer.cards[0]);
}
$("hint-toggle").addEventListener("change", renderHint);

// ------------------------------------------------------------------ countdown
setInterval(() => {
  $("countdown").textContent = endsAt === null ? "" : `${Math.max(0, Math.ceil((endsAt - Date.now()) / 1000))} s`;
}, 200);

// ------------------------------------------------------------------ keyboard
document.addEventListener("keydown", (ev) => {
  if (!state || (ev.target.tagName === "INPUT" && ev.target.type !== "checkbox") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const control = ["BUTTON", "SELECT", "A", "SUMMARY"].includes(ev.target.tagName) || ev.target.getAttribute("role") === "button";
  if (control && (ev.key === "Enter" || ev.key === " ")) return;  // (it presses what has the focus)
  if (ev.key === "Enter" && state.phase === "betting") { send({ type: "deal" }); return; }
  const actions = KEYS[ev.key.toLowerCase()] || [];
  for (const action of actions) {
    const moves = state.legal.filter((m) => m.action === action);
    if (moves.length) { act(moves.find((m) => m.follow === "both") || moves[0]); return; }
  }
});

// ------------------------------------------------------------------ history and replay
// with the token, the player's own name is shown in them; a watcher's names no one
// (in accounts mode the cookie goes with every request by itself)
const asMe = (sep) => (token && token !== COOKIE ? `${sep}token=${encodeURIComponent(token)}` : "");
async function loadHistory() {
  if (!table) return;
  const items = await (await fetch(`/api/tables/${table}/history?limit=20${asMe("&")}`)).json();
  const ul = $("history");
  ul.innerHTML = "";
  for (const r of items) {
    if (r.status === "open") continue;
    const li = el("li", "", `#${r.number} ${r.status} ${r.ended_at ? r.ended_at.slice(11, 19) : ""}`);
    li.dataset.round = r.id;
    li.addEventListener("click", () => openReplay(r.id));
    ul.append(li);
  }
}
let replayDoc = null, replayAt = 0;
async function openReplay(id) {
  const r = await fetch(`/api/rounds/${id}${asMe("?")}`);
  if (!r.ok) return;
  replayDoc = await r.json();
  replayDoc.events = replayDoc.events.filter((e) => !["stake", "rules", "discard"].includes(e.kind));
  replayAt = 0;
  $("replay").hidden = false;
  $("replay-title").textContent = `Round ${replayDoc.round.number} `;
  drawReplay();
}
function drawReplay() {
  const evs = replayDoc.events.slice(0, replayAt + 1);
  const dealer = [], hole = [false], boxes = {};
  const hand = (b, h) => { boxes[b] = boxes[b] || [[]]; while (boxes[b].length <= h) boxes[b].push([]); return boxes[b][h]; };
  for (const e of evs) {
    if (e.kind === "wager") hand(e.box, 0);
    if (e.kind === "deal" && e.box == null) dealer.push(e.card);
    else if (e.kind === "deal") hand(e.box, e.hand || 0).push(e.card);
    if (e.kind === "hole") hole[0] = true;
    if (e.kind === "reveal") { hole[0] = false; dealer.push(e.card); }
    if (e.kind === "action" && e.detail === "split" && e.follow == null) {  // the seated player's
      const h = hand(e.box, e.hand || 0), card = h.pop();
      boxes[e.box].splice((e.hand || 0) + 1, 0, [card]);
    }
  }
  const d = $("replay-dealer");
  d.replaceWith(Object.assign(cardsEl(dealer, hole[0]), { id: "replay-dealer" }));
  const bx = $("replay-boxes");
  bx.innerHTML = "";
  for (const [b, hands] of Object.entries(boxes)) {
    const div = el("div", "", `box ${b}`);
    hands.forEach((h) => div.append(cardsEl(h)));
    bx.append(div);
  }
  const e = replayDoc.events[replayAt];
  $("replay-step").textContent = ` ${replayAt + 1}/${replayDoc.events.length} `;
  $("replay-text").textContent = e ? describe(e) : "";
}
function describe(e) {
  const where = e.box == null ? "dealer" : `box ${e.box}` + (e.hand ? ` hand ${e.hand + 1}` : "");
  const amt = e.amount != null ? ` ${money(e.amount)}` : "";
  switch (e.kind) {
    case "deal": return `${e.card} to ${where}`;
    case "burn": return "a card is burnt face down";
    case "hole": return "the dealer's hole card, face down";
    case "reveal": return `the dealer turns up ${e.card}`;
    case "shuffle": return e.detail ? `the shoe is shuffled, committed to as ${e.detail}` : "the shoe is shuffled";
    case "disclose": return "the shoe that ends is revealed (check it under Shoe)";
    case "action": return e.detail === "no-more-bets" ? "No more bets" : `${where}: ${e.player || ""} ${e.detail}${e.follow != null ? "/" + e.follow : ""}${amt}`;
    case "outcome": return `${where}: ${e.player} ${e.detail}${e.odds ? " at " + e.odds : ""}`;
    default: return `${e.kind} ${e.player || ""}${amt} ${e.detail || ""}`.trim();
  }
}
$("replay-next").addEventListener("click", () => { if (replayAt < replayDoc.events.length - 1) { replayAt++; drawReplay(); } });
$("replay-prev").addEventListener("click", () => { if (replayAt > 0) { replayAt--; drawReplay(); } });
$("replay-close").addEventListener("click", () => { $("replay").hidden = true; });

// ------------------------------------------------------------------ supervisor
for (const k of ["void", "absent", "reconstruct", "exposed-card", "face-up-in-shoe",
  "missed-insurance", "missed-surrender", "missed-reshuffle", "damaged"]) {
  const o = el("option", "", k); o.value = k; $("procedure").append(o);
}
$("procedure-apply").addEventListener("click", () => {
  const m = { type: "irregularity", kind: $("procedure").value };
  const box = parseInt($("procedure-box").value, 10);
  if (box) m.box = box;
  send(m);
});

async function start() {
  accounts = (await (await fetch("/api/server")).json()).accounts;
  if (accounts) {  // an account sits down: no name to type (the field comes hidden)
    $("player-name").required = false;
    await whoAmI();
  } else $("player-name").hidden = false;
  loadTables();
}
start();
