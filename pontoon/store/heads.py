"""Signed heads: what the house signs at each group commit, and how a head is checked.

A commit signs one body for all the tables it moved: the store's id, the time, and for each
table its head (the last event's ``seq`` and hash), where its shoe stands (``shoe``: the seq of
the write that stored it whole, of the last write that moved it, and the cards drawn between)
and the number of the round the commit wrote, if any. The body is canonical JSON (sorted keys,
no spaces), signed with the record key (:mod:`pontoon.store.signing`); ``tables.signed``
names the signature that covers each table's head now. The same lines go to the anchors
(:mod:`pontoon.store.anchors`), outside the database.

A database writer without the key cannot make a table's head, its chain or its shoe other than
the house left them: the head's hash covers every event before it (:mod:`pontoon.store.chain`),
the signature covers the head, the shoe's place and the digest of the sealed shoe as stored,
and the sealed shoe names its table and write (:mod:`pontoon.store.secret`): an auditor
without the shoe key still sees a stored shoe that is not the one the house sealed.

>>> from pontoon.store.signing import RecordKeys, generate
>>> keys = RecordKeys([generate()])
>>> head = Head("kauri", 3, "ab" * 32, (2, 3, 1, "c0ffee"), 1)
>>> signed = sign(keys, "s1", "2026-01-01T00:00:00.000000Z", [head])
>>> check(keys.public(), "s1", head, signed) is None
True
>>> check(keys.public(), "s1", head._replace(shoe=(2, 3, 1, "bad")), signed)
'its stored shoe is not the one the house sealed at that write (changed or swapped)'
>>> check(keys.public(), "s1", head._replace(shoe=(2, 3, 0, "c0ffee")), signed)[-60:]
'stored: whole at event 2, moved at event 3, 0 drawn, c0ffee)'
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple

from pontoon.store.signing import PublicKeys, RecordKeys

# where a table's shoe stands: (the seq of the write that stored it whole, the seq of the last
# write that moved it, the cards drawn between, the first 32 hex digits of the SHA-256 of the
# sealed state as stored)
Shoe = tuple[int, int, int, str]


def digest(sealed: str) -> str:
    """What a signed head keeps of a sealed shoe: enough to know it again, nothing of it."""
    return hashlib.sha256(sealed.encode()).hexdigest()[:32]


class Head(NamedTuple):
    """A table's head as a signed body holds it."""

    table: str
    seq: int
    hash: str
    shoe: Shoe | None = None
    round: int | None = None  # the number of the round the commit wrote


class Signed(NamedTuple):
    """A signature row: its id, time, key id, body (the bytes signed, as text) and signature."""

    id: str
    at: str
    key: str
    body: str
    signature: str

    def to_dict(self) -> dict[str, str]:
        return self._asdict()


def body(store_id: str, at: str, heads: list[Head]) -> str:
    """The canonical JSON a commit signs."""
    data: dict[str, Any] = {
        "v": 1,
        "store": store_id,
        "at": at,
        "heads": {
            h.table: {"seq": h.seq, "hash": h.hash, "shoe": h.shoe, "round": h.round} for h in heads
        },
    }
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def sign(keys: RecordKeys, store_id: str, at: str, heads: list[Head]) -> Signed:
    text = body(store_id, at, heads)
    kid, signature = keys.sign(text.encode())
    return Signed(hashlib.sha256(signature.encode()).hexdigest()[:32], at, kid, text, signature)


def heads_of(signed: Signed) -> tuple[str, dict[str, Head]]:
    """(the store's id, the heads) of a signed body (its signature not checked here)."""
    data = json.loads(signed.body)
    out = {}
    for table, h in data["heads"].items():
        shoe: Shoe | None = None
        if h["shoe"] is not None:
            whole, moved, drawn, sealed = h["shoe"]
            shoe = (int(whole), int(moved), int(drawn), str(sealed))
        out[table] = Head(table, int(h["seq"]), str(h["hash"]), shoe, h.get("round"))
    return str(data["store"]), out


def genuine(keys: PublicKeys, signed: Signed) -> str | None:
    """None when ``signed`` is signed by one of ``keys`` and its id is its signature's; else
    why not."""
    if signed.key not in keys:
        return f"it is signed by key {signed.key}, which is not among the public keys given"
    if not keys.check(signed.key, signed.body.encode(), signed.signature):
        return "its signature does not match its body (the body or the signature was changed)"
    return None


def check(keys: PublicKeys, store_id: str, head: Head, signed: Signed | None) -> str | None:
    """None when ``signed`` is a genuine signature of this store that covers ``head`` as
    stored (its seq, hash and shoe); else why not, in a phrase."""
    if signed is None:
        return (
            "its head is not signed (a store recorded before heads were signed is signed once "
            "by pontoon rekey)"
        )
    wrong = genuine(keys, signed)
    if wrong:
        return wrong
    store, heads = heads_of(signed)
    if store != store_id:
        return f"its signed head is another store's ({store})"
    mine = heads.get(head.table)
    if mine is None:
        return "the signature its head names does not cover it"
    if (mine.seq, mine.hash) != (head.seq, head.hash):
        return (
            f"its head is event {head.seq}, but the signed head is event {mine.seq} "
            f"(hash {mine.hash[:12]}…)"
        )
    if mine.shoe != head.shoe and mine.shoe and head.shoe and mine.shoe[:3] == head.shoe[:3]:
        return "its stored shoe is not the one the house sealed at that write (changed or swapped)"
    if mine.shoe != head.shoe:
        return (
            f"its shoe is not where the signed head says (signed: {_shoe(mine.shoe)}; "
            f"stored: {_shoe(head.shoe)})"
        )
    return None


def _shoe(shoe: Shoe | None) -> str:
    if shoe is None:
        return "no shoe"
    return f"whole at event {shoe[0]}, moved at event {shoe[1]}, {shoe[2]} drawn, {shoe[3]}"


__all__ = ["Head", "Shoe", "Signed", "body", "check", "digest", "genuine", "heads_of", "sign"]
