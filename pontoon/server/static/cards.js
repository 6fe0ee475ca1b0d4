"use strict";
// What both pages draw with: elements, and cards as the table shows them.
const $ = (id) => document.getElementById(id);
const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function cardEl(code) {
  // a card is an image with its name (words.js) for whoever does not see it; the suit is in
  // its symbol, not in its colour alone
  const c = el("div", code ? "card" : "card back");
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", cardName(code));
  if (!code) return c;
  const rank = code[0] === "T" ? "10" : code[0], suit = code[1];
  if (suit === "H" || suit === "D") c.classList.add("red");
  c.dataset.card = code;
  for (const [cls, text] of [["r", rank], ["s", SUITS[suit]], ["big", SUITS[suit]]]) {
    const part = el("span", cls, text);
    part.setAttribute("aria-hidden", "true");
    c.append(part);
  }
  return c;
}
function cardsEl(codes, hole) {
  const d = el("div", "cards");
  codes.forEach((c) => d.append(cardEl(c)));
  if (hole) d.append(cardEl(null));
  return d;
}
