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
  if (!code) { return el("div", "card back"); }
  const rank = code[0] === "T" ? "10" : code[0], suit = code[1];
  const c = el("div", "card" + (suit === "H" || suit === "D" ? " red" : ""));
  c.dataset.card = code;
  c.append(el("span", "r", rank), el("span", "s", SUITS[suit]), el("span", "big", SUITS[suit]));
  return c;
}
function cardsEl(codes, hole) {
  const d = el("div", "cards");
  codes.forEach((c) => d.append(cardEl(c)));
  if (hole) d.append(cardEl(null));
  return d;
}
