"use strict";
// What the table says, in one place: the names of the cards, and the phrases the live region
// speaks to a player who listens rather than looks (a screen reader reads it as a dealer would
// call the table). Another language is another copy of this file; English only for now.
const WORDS = {
  // what the page shows
  actions: { hit: "Hit", stand: "Stand", double: "Double", split: "Split",
    surrender: "Surrender", insure: "Insure", "no-insurance": "No insurance", decline: "Decline",
    refuse: "Refuse", rescue: "Rescue", void: "Void hand", complete: "Complete hand" },
  deal: "Deal",
  chip: (amount) => `chip ${amount}`,
  box: (n, seated) => `box ${n}` + (seated ? ` · ${seated}` : ""),
  seat: { open: "empty seat: bet to sit", empty: "empty seat" },
  me: {
    supervisor: (table) => `Supervisor at ${table}`,
    staff: (name, role, table, round) => `${name}, ${role} at ${table} · round ${round}`,
    watching: (table, round) => `watching ${table} · round ${round}`,
    player: (name, table, round) => `${name} at ${table} · round ${round}`,
  },
  left: (cents) => (cents === null ? "You left the table" : `You left the table: ${money(cents)} cashed out`),
  turn: {
    named: "Type your name and sit down, then pick a chip and click a box",
    sitDown: "Sit down, then pick a chip and click a box",
    logIn: "Log in (or register) to sit down",
    bets: "Place your bets: pick a chip, click a box",
    yours: "Your turn — ",
    kinds: {
      betting: (box, who) => `Betting: ${who}`,
      decide: (box, who) => `Box ${box}: ${who} to play`,
      follow: (box, who, follow) => `Box ${box}: ${who} may ${follow} too`,
      insurance: (box, who) => `Insurance: ${who}`,
      choose: (box, who) => `${who}: void or complete`,
    },
  },
  // what the live region says
  ranks: { A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king" },
  suits: { S: "spades", H: "hearts", D: "diamonds", C: "clubs" },
  faceDown: "a face-down card",
  card: (rank, suit) => `${rank} of ${suit}`,
  toDealer: (card) => `${card} to the dealer`,
  toBox: (card, box, hand) => `${card} to box ${box}` + (hand === null ? "" : `, hand ${hand + 1}`),
  dealerTotal: (text) => `dealer shows ${text}`,
  boxTotal: (box, hand, text) => `box ${box}` + (hand === null ? "" : ` hand ${hand + 1}`) + `: ${text}`,
  yourTurn: (what, seconds) => `your turn: ${what}` + (seconds === null ? "" : `, ${seconds} seconds`),
  theirTurn: (what) => what,
  offer: { insurance: "insurance is offered", follow: (what) => `you may ${what} too`,
    choose: "void or complete: your choice" },
  betsOpen: "place your bets",
  noMoreBets: "no more bets",
  outcome: (player, cents) => `${player} ${cents > 0 ? "wins" : cents < 0 ? "loses" : "breaks even"}` +
    (cents === 0 ? "" : ` ${money(Math.abs(cents))}`),
  balance: (cents) => `your balance is ${money(cents)}`,
  refused: (text) => `refused: ${text}`,
};

function cardName(code) {
  if (!code) return WORDS.faceDown;
  return WORDS.card(WORDS.ranks[code[0]], WORDS.suits[code[1]]);
}
