"use strict";
// A revealed shoe's check (docs/operators/fairness.md), as the table page runs it in the browser:
// the text revealed hashes (SHA-256) to the commitment recorded at its shuffle, and the
// cards the record shows leaving that shoe are the first cards of its order, in order.
// `doc` is GET /api/tables/{name}/shoes/{seq}; `shown`, the commitments this page was shown.

async function sha256hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// What the check finds, in one line: "ok: ..." or "WRONG: ..." (what differs, and where)
async function shoeVerdict(doc, shown) {
  if (!globalThis.crypto || !crypto.subtle) {
    return "this page cannot hash here (it is not served over https): check with sha256sum";
  }
  if (!doc.commitment) return `no commitment was recorded for the shoe revealed at event ${doc.seq}`;
  const hash = await sha256hex(doc.text);
  if (hash !== doc.commitment) {
    return `WRONG: the revealed shoe hashes to ${hash}, not to its commitment ${doc.commitment}`;
  }
  const line = doc.text.split("\n")[3] || "";
  const order = line.startsWith("cards ") ? line.slice(6).split(" ") : [];
  for (let i = 0; i < doc.cards.length; i++) {
    const c = doc.cards[i];
    if (order[i] !== c.card) {
      return `WRONG: card ${i + 1} of the shoe is ${order[i] || "missing"}, but event ${c.seq} shows ${c.card} leaving it`;
    }
  }
  const seen = shown && shown.has(doc.commitment) ? ", the commitment this page was shown" : "";
  const n = doc.cards.length;
  return `ok: the shoe revealed at event ${doc.seq} hashes to its commitment (event ${doc.committed_at}${seen}), and the ${n} cards that left it are its first ${n}, in order`;
}

if (typeof module !== "undefined") module.exports = { sha256hex, shoeVerdict };
