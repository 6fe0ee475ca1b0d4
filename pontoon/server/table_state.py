"""What a table tells (:class:`TableView`): its state document for each client, and the
texts it is sent as, made as seldom as they can be.

A state document never holds an undealt card, the shoe, a burnt card or the hole card. The
part every client shares is made once per version (:meth:`TableView.shared`) and encoded once
(each of a round's events made and encoded once, :meth:`TableView._public_events`; the rules
once until they change); the balances and the clock once per broadcast; only the recipient's
own part (its legal moves, its balance) for each client. The view also keeps, for each
player, the version at which what the player may do last changed (a click made on an older
one is stale: :meth:`TableView.stale`).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from pontoon.events import Event
from pontoon.hand import describe, total
from pontoon.layout import Box, Move
from pontoon.round import Round
from pontoon.shoe import Shoe, commitment_of
from pontoon.store.recorder import RoundLog, TableLog
from pontoon.store.revealed import Revealed
from pontoon.store.show import event_text
from pontoon.vocab import Procedure as Kind
from pontoon.vocab import Role

from .clients import Client, Session
from .protocol import encode

HIDDEN = ("hole", "burn")
EVENTS_SHOWN = 40  # the round's last events a state holds


class Viewed(Protocol):
    """The table as its view reads it (:class:`pontoon.server.table.Table`)."""

    name: str
    version: int
    round: Round | None
    roundlog: RoundLog | None
    log: TableLog
    public_rules: dict[str, Any]
    natural: str
    notes: list[str]
    last_result: dict[str, int]
    shoe: Shoe
    revealed: list[Revealed]
    names: set[str]
    clients: set[Client]

    @property
    def deadline(self) -> float | None:
        """When (``time.monotonic()``) the wait the timer measures ends."""
        ...

    def balance(self, name: str) -> int:
        """What ``name`` may stake."""
        ...


def card_list(cards: list[Any]) -> list[str]:
    return [c.code for c in cards]


def public_event(e: Event) -> dict[str, Any]:
    d = e.to_dict()
    if e.kind in HIDDEN:
        d.pop("card", None)
    if e.kind in ("rules", "disclose"):
        d.pop("detail", None)  # (a shoe's text: shown by its check, once no round is in play)
    if e.kind == "disclose":
        d["commitment"] = commitment_of(e.detail or "")
        d["text"] = f"the shoe that ends is revealed (SHA-256 {d['commitment']})"
    elif e.kind == "burn":
        d["text"] = "a card is burnt face down"
    elif e.kind == "hole":
        d["text"] = "the dealer's second card, face down (hole card)"
    elif e.kind == "irregularity" and e.detail in (Kind.ABANDONED, Kind.FAILURE):
        d["text"] = f"{event_text(e)} (rule {e.rule})"
    elif e.kind == "irregularity":
        where = f" on box {e.box}" if e.box is not None else ""
        d["text"] = f"{e.detail}{where} by the {e.by or 'dealer'} (rule {e.rule})"
    else:
        d["text"] = event_text(e)
    return d


class TableView:
    """What ``table`` tells each client, and its caches (made again when the version moves
    on, or after a rewind: :meth:`forget`)."""

    def __init__(self, table: Viewed) -> None:
        self.table = table
        self.changed: dict[str, int] = {}  # player -> version of the last change for them
        self._seen_keys: dict[str, tuple[Any, ...]] = {}
        self._cache: tuple[int, dict[str, Any], list[Move]] | None = None
        self._text: tuple[int, str] | None = None  # the shared state as JSON (without "}")
        self._pub_round: Round | None = None  # the round whose events _pub holds
        self._pub: list[tuple[Event, dict[str, Any], str]] = []  # its events: as sent, JSON
        self._rules_text: tuple[dict[str, Any] | None, str] = (None, "")  # (its rules, JSON)

    def forget(self) -> None:
        """The table was taken back to where it was last told (:meth:`Table.rewind`): the
        texts are made again."""
        self._cache = self._text = None

    def forget_player(self, name: str) -> None:
        """``name`` left the table."""
        self.changed.pop(name, None)
        self._seen_keys.pop(name, None)

    def awaiting(self) -> dict[str, Any] | None:
        """Whose decision the table waits for (:meth:`pontoon.round.Round.to_act`)."""
        rnd = self.table.round
        turn = rnd.to_act() if rnd is not None else None
        return turn.to_dict() if turn is not None else None

    def mine(self, legal: list[Move], name: str) -> list[Move]:
        """The moves of ``legal`` that are ``name``'s to make."""
        rnd = self.table.round
        return [m for m in legal if rnd.player_of(m) == name] if rnd is not None else []

    def _box_doc(self, box: Box) -> dict[str, Any]:
        hands = []
        for i, h in enumerate(box.hands):
            hands.append(
                {
                    "hand": i,
                    "cards": card_list(h.cards),
                    "total": h.total if h.cards else 0,
                    "text": describe(h.cards, from_split=h.from_split, natural=self.table.natural)
                    if h.cards
                    else "",
                    "state": h.state,
                    "doubled": h.doubled,
                    "wagers": [
                        {
                            "player": w.player,
                            "stake": w.stake,
                            "double": w.double,
                            "outcome": w.outcome,
                            "net": w.net if w.settled else None,
                        }
                        for w in h.wagers
                    ],
                }
            )
        return {
            "box": box.number,
            "seated": box.seated,
            "players": list(box.players),
            "original": dict(box.original),
            "insurance": {p: w.amount for p, w in box.insurance.items()},
            "hands": hands,
        }

    def shared(self) -> tuple[dict[str, Any], list[Move]]:
        """What every client of this version is sent, and the legal moves (made once)."""
        t = self.table
        cached = self._cache
        if cached is not None and cached[0] == t.version:
            return cached[1], cached[2]
        rnd = t.round
        legal = rnd.legal_moves() if rnd is not None and not rnd.over else []
        doc: dict[str, Any] = {
            "type": "state",
            "table": t.name,
            "version": t.version,
            "rules": t.public_rules,
            "round": t.roundlog.number if t.roundlog else t.log.last_number + 1,
            "phase": "idle" if rnd is None else ("over" if rnd.over else rnd.phase),
            "boxes": [],
            "dealer": {"cards": [], "total": 0, "text": "", "hole": False},
            "awaiting": self.awaiting(),
            "events": [],
            "notes": t.notes[-5:],
            "result": dict(t.last_result),
            "fairness": {
                "commitment": t.shoe.commitment,  # the shoe in play (docs/operators/fairness.md)
                "revealed": [r.to_dict() for r in t.revealed],
            },
        }
        if rnd is not None:
            order = rnd.order if rnd.order else [rnd.boxes[n] for n in sorted(rnd.boxes)]
            doc["boxes"] = [self._box_doc(b) for b in order]
            doc["dealer"] = {
                "cards": card_list(rnd.dealer),
                "total": total(rnd.dealer) if rnd.dealer else 0,
                "text": describe(rnd.dealer, natural=t.natural) if rnd.dealer else "",
                "hole": rnd.hole is not None,  # a face-down card is there; never which
            }
            doc["events"] = self._public_events(rnd)
        self._cache = (t.version, doc, legal)
        return doc, legal

    def _public_events(self, rnd: Round) -> list[dict[str, Any]]:
        """The round's last 40 events as sent, each made (and encoded) once. Between versions
        a round's events are only added to (a refused move takes back only what it added
        itself); when its last known event is no longer where it was (a rewind), or for a
        new round, they are made again."""
        pub, evts = self._pub, rnd.events
        if (
            self._pub_round is not rnd
            or len(pub) > len(evts)
            or (pub and pub[-1][0] is not evts[len(pub) - 1])
        ):
            self._pub_round, self._pub = rnd, []
            pub = self._pub
        for e in evts[len(pub) :]:
            d = public_event(e)
            pub.append((e, d, encode(d)))
        return [p[1] for p in pub[-EVENTS_SHOWN:]]

    def _shared_text(self) -> str:
        """The shared state as JSON without its closing brace; the events' JSON comes from
        :meth:`_public_events`, the rules' is made once (until the rules change)."""
        doc = self.shared()[0]
        head = encode({k: v for k, v in doc.items() if k not in ("events", "rules")})
        if self._rules_text[0] is not self.table.public_rules:  # set again when the limits change
            rules = encode(self.table.public_rules)
            self._rules_text = (self.table.public_rules, rules)
        texts = [p[2] for p in self._pub[-EVENTS_SHOWN:]] if doc["events"] else []
        return f'{head[:-1]},"rules":{self._rules_text[1]},"events":[{",".join(texts)}]'

    def state(self, session: Session | None) -> dict[str, Any]:
        """The state document for ``session``: the table as all see it, with the recipient's
        own legal moves."""
        doc = dict(self.shared()[0])
        doc |= self._common()
        doc |= self._personal(session)
        return doc

    def state_text(self, session: Session | None, common: str | None = None) -> str:
        """:meth:`state` as JSON text. The part every client shares is encoded once per
        version (and ``common``, the balances and clock, once per broadcast); only the
        recipient's own part is encoded for each client."""
        cached = self._text
        if cached is None or cached[0] != self.table.version:
            cached = (self.table.version, self._shared_text())
            self._text = cached
        if common is None:
            common = self._common_text()
        mine = encode(self._personal(session))
        return f"{cached[1]},{common},{mine[1:]}"

    def _common(self) -> dict[str, Any]:
        deadline = None
        if self.table.deadline is not None:
            deadline = max(0, int((self.table.deadline - time.monotonic()) * 1000))
        connected = {c.session.name for c in self.table.clients}
        players = {n: {"connected": n in connected} for n in sorted(self.table.names)}
        return {"deadline_ms": deadline, "players": players}

    def _common_text(self) -> str:
        return encode(self._common())[1:-1]

    def _personal(self, session: Session | None) -> dict[str, Any]:
        rnd = self.table.round
        me = session.name if session is not None and session.role == "player" else None
        legal: list[dict[str, Any]] = []
        if me is not None and rnd is not None:
            legal = [
                {"action": m.action, "box": m.box, "hand": m.hand, "follow": m.follow}
                for m in self.mine(self.shared()[1], me)
            ]
        out: dict[str, Any] = {
            "you": session.name if session else None,
            "role": session.role if session else "watcher",
            "legal": legal,
            "balance": self.table.balance(me) if me is not None else None,  # yours alone
        }
        if session is not None and session.role == Role.SUPERVISOR:
            out["balances"] = {n: self.table.balance(n) for n in sorted(self.table.names)}
        return out

    def mark_changes(self) -> None:
        """Note, for each player, the version at which what the player may do (or the cards
        of the player's boxes) last changed: a click made before it is stale."""
        rnd = self.table.round
        legal = self.shared()[1]
        for name in self.table.names:
            key: tuple[Any, ...] = ()
            if rnd is not None:
                boxes = [b for b in rnd.boxes.values() if name in b.players]
                key = (
                    rnd.phase,
                    tuple(self.mine(legal, name)),
                    tuple(tuple(len(h.cards) for h in b.hands) for b in boxes),
                )
            if self._seen_keys.get(name) != key:
                self._seen_keys[name] = key
                self.changed[name] = self.table.version

    def stale(self, session: Session, v: int) -> bool:
        """Whether a decision made on version ``v`` no longer fits what the sender sees."""
        if session.role != "player":
            return v != self.table.version
        return v < self.changed.get(session.name, 0)

    def broadcast(self) -> None:
        """Queue the new state to every client: nothing is sent (nor awaited) here, so a
        socket that does not read holds up nobody (each client's writer sends, and a client
        that falls behind is disconnected)."""
        common = self._common_text()
        for client in list(self.table.clients):
            client.post_state(self.state_text(client.session, common))


__all__ = ["HIDDEN", "TableView", "Viewed", "card_list", "public_event"]
