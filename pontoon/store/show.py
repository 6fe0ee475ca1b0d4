"""Reading the store for people: a round step by step (8.6, 16.5) and lists of rounds.

>>> event_text(Event("deal", box=1, hand=0, card="AS", rule="8.2(a)"))
'AS to box 1'
>>> event_text(Event("pay", box=1, hand=0, player="ana", amount=1500, rule="9.1"))
'pay: $15.00 from the house to ana on box 1'
>>> event_text(Event("action", box=1, hand=0, player="ana", detail="stand", by="policy"))
'box 1: ana stand (by the policy)'
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, exists, select

from pontoon.errors import InputError, PontoonError
from pontoon.events import Event
from pontoon.money import dollars, signed
from pontoon.replay import replay
from pontoon.scenario import result_document
from pontoon.shoe import commitment_of, read_shoe_text
from pontoon.store.db import Store
from pontoon.store.export import rows
from pontoon.store.schema import round_players, rounds


def _where(e: Event) -> str:
    if e.box is None:
        return "the dealer"
    return f"box {e.box}" + (f" hand {e.hand + 1}" if e.hand else "")


def event_text(e: Event) -> str:
    """One event in words (without its rule)."""
    k = e.kind
    amount = dollars(e.amount) if e.amount is not None else ""
    on = f" on {_where(e)}" if e.box is not None else ""
    if k == "rules":
        return f"rule set {e.rule}"
    if k == "shuffle":
        return "the shoe is shuffled" + (f", committed to as {e.detail}" if e.detail else "")
    if k == "disclose":
        return f"the shoe that ends is revealed: {revealed_text(e.detail)}"
    if k == "burn":
        return f"{e.card} is burnt face down"
    if k == "wager":
        return f"{e.player} wagers {amount} on box {e.box}"
    if k == "deal":
        return f"{e.card} to {_where(e)}"
    if k == "hole":
        return f"{e.card} to the dealer face down (hole card)"
    if k == "reveal":
        return f"the dealer turns up {e.card}"
    if k == "action":
        if e.detail == "no-more-bets":
            return "No more bets"
        if e.detail == "peek":
            return "the dealer peeks at the hole card"
        extra = f" {amount}" if amount else ""
        follow = f"/{e.follow}" if e.follow is not None else ""  # 15.3(d): split/both, split/1
        by = f" (by the {e.by})" if e.by else ""  # the interrupted-round policy's move
        return f"{_where(e)}: {e.player} {e.detail}{follow}{extra}{by}"
    if k == "stake":
        return f"stake: {amount} from {e.player} to the layout{on}"
    if k == "return":
        return f"refund: {amount} from the layout to {e.player}{on}"
    if k == "collect":
        return f"collect: {amount} of the wager of {e.player} to the house{on}"
    if k == "pay":
        return f"pay: {amount} from the house to {e.player}{on}"
    if k == "outcome":
        odds = f" at {e.odds}" if e.odds else ""
        return f"{_where(e)}: {e.player} {e.detail}{odds}"
    if k == "discard":
        return f"the cards of {_where(e)} go to the discard rack"
    if k == "irregularity" and e.detail in _INTERRUPTED:
        policy = (e.rule or "").partition("interrupted=")[2].rstrip(")")
        done = "voids it" if policy == "void" else "completes it by the optimal chart"
        return f"the round was interrupted ({_INTERRUPTED[e.detail]}): the policy {done}"
    if k == "void":
        return f"the round is void ({e.detail})"
    if k == "end":
        return "the round is void" if e.detail == "void" else "the round is over"
    if k in ("deposit", "withdraw"):
        return f"{e.player} {'deposits' if k == 'deposit' else 'withdraws'} {amount}"
    return k


def revealed_text(text: str | None) -> str:
    """A revealed shoe in a few words: its SHA-256 (to set beside the commitment), its cards
    and cut (the whole text is the event's ``detail``: ``replay --json``, export).

    >>> from pontoon.cards import parse_cards
    >>> from pontoon.shoe import shoe_text
    >>> revealed_text(shoe_text(parse_cards("7H KD"), bytes(32), 1))  # doctest: +ELLIPSIS
    'SHA-256 838e8a6305bb5f8660...637391673, 2 cards, the cutting card after card 1'
    """
    try:
        shoe = read_shoe_text(text or "")
    except ValueError as exc:
        return f"its text cannot be read ({exc})"
    digest = commitment_of(text or "")
    return f"SHA-256 {digest}, {len(shoe.cards)} cards, the cutting card after card {shoe.cut}"


# the interrupted-round policy's procedures (pontoon.irregularities.INTERRUPTED): why
_INTERRUPTED = {
    "interrupted-abandoned": "a decision awaited too long",
    "interrupted-failure": "the table came back from a failure too late",
}

_SHOWN = ("id", "table", "number", "status", "rules", "started_at", "ended_at", "house", "players")


def _records(store: Store, query: Select[Any]) -> list[dict[str, Any]]:
    """The rounds ``query`` selects, as shown and served, with their players' nets."""
    return [{k: r[k] for k in _SHOWN} for r in rows(store, query, players=True)]


def _nets_text(r: dict[str, Any]) -> str:
    """The nets of a round's players and the house's.

    >>> _nets_text({"players": {"ana": 1500, "ben": -500}, "house": -1000})
    'ana +$15.00, ben -$5.00; house -$10.00'
    """
    nets = ", ".join(f"{p} {signed(n)}" for p, n in r["players"].items())
    return f"{nets}; house {signed(r['house'])}"


def replay_document(store: Store, round_id: int) -> dict[str, Any]:
    """A recorded round: its record, its events in order, and its reconstruction."""
    found = _records(store, select(rounds).where(rounds.c.id == round_id))
    if not found:
        raise InputError(f"no round {round_id} in the store")
    stored = store.round_events(round_id)
    evts: list[Event] = [s["event"] for s in stored]
    engine = evts
    cut = next((i for i, e in enumerate(evts) if e.kind == "void"), None)
    if cut is not None:
        engine = evts[:cut]
    doc: dict[str, Any] = {
        "round": found[0],
        "events": [
            {"seq": s["seq"], "at": s["at"], "hash": s["hash"]} | s["event"].to_dict()
            for s in stored
        ],
    }
    try:
        rebuilt = replay(engine)
        doc["reconstructed"] = rebuilt.events == engine
        result = result_document(rebuilt)
        result.pop("events")
        doc["result"] = result
    except PontoonError as exc:
        doc["reconstructed"] = False
        doc["result"] = {"error": str(exc)}
    return doc


def replay_text(doc: dict[str, Any]) -> str:
    r = doc["round"]
    lines = [
        f"Round {r['id']}: table {r['table']!r} round {r['number']}, rules {r['rules']}, "
        f"{r['status']}",
        f"Started {r['started_at']}" + (f", ended {r['ended_at']}" if r["ended_at"] else ""),
    ]
    lines.append(f"Players: {_nets_text(r)}")
    ok = doc.get("reconstructed")
    lines.append(
        "Reconstruction (8.6): the engine, given these cards and decisions, writes this same log."
        if ok
        else "Reconstruction FAILED: the engine's replay differs from this log."
    )
    lines.append("")
    for step, e in enumerate(doc["events"], 1):
        event = Event.from_dict({k: v for k, v in e.items() if k not in ("seq", "at", "hash")})
        rule = f"  (rule {event.rule})" if event.rule and event.kind != "rules" else ""
        lines.append(f"{step:>4}. {event_text(event)}{rule}")
    result = doc.get("result", {})
    if "dealer" in result:
        lines.append("")
        d = result["dealer"]
        lines.append(f"Dealer: {' '.join(d['cards'])} = {d['total']}")
        for box in result["boxes"]:
            for i, hand in enumerate(box["hands"]):
                name = f"Box {box['box']}" + (f" hand {i + 1}" if len(box["hands"]) > 1 else "")
                wagers = ", ".join(
                    f"{w['player']} {dollars(w['amount'])} {w['outcome'] or 'open'}"
                    + (f" {w['odds']}" if w.get("odds") else "")
                    + f" {signed(w['net'])}"
                    for w in hand["wagers"]
                )
                lines.append(f"{name}: {' '.join(hand['cards'])} = {hand['total']}; {wagers}")
    return "\n".join(lines)


def _day_bound(text: str, end: bool) -> str:
    """A --since/--until value as stored time text; a bare date is the whole day."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text) + timedelta(days=1 if end else 0)
            return day.isoformat() + "T00:00:00.000000Z"
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{text!r} is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM") from None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


OUTCOMES = ("win", "lose", "push", "over", "void", "open")


def where_rounds(table: str | None, since: str | None, until: str | None) -> list[Any]:
    """The conditions on ``rounds`` of a table and of rounds started within the dates."""
    conds: list[Any] = []
    if table:
        conds.append(rounds.c.table_id == table)
    if since:
        conds.append(rounds.c.started_at >= _day_bound(since, False))
    if until:
        conds.append(rounds.c.started_at < _day_bound(until, True))
    return conds


def list_rounds(
    store: Store,
    *,
    table: str | None = None,
    player: str | None = None,
    since: str | None = None,
    until: str | None = None,
    outcome: str | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Rounds, newest first, filtered. ``outcome`` win/lose/push: the player's net (any
    player's without ``player``) in a finished round; over/void/open: the round's status."""
    rp = round_players.c
    q = select(rounds)
    conds = where_rounds(table, since, until)
    if outcome is not None and outcome not in OUTCOMES:
        raise InputError(f"--outcome is one of {', '.join(OUTCOMES)}")
    if outcome in ("over", "void", "open"):
        conds.append(rounds.c.status == outcome)
    pick = [rp.round_id == rounds.c.id]
    if player:
        pick.append(rp.player == player)
    if outcome in ("win", "lose", "push"):
        conds.append(rounds.c.status == "over")
        pick.append({"win": rp.net > 0, "lose": rp.net < 0, "push": rp.net == 0}[outcome])
    if player or outcome in ("win", "lose", "push"):
        conds.append(exists().where(and_(*pick)))
    q = q.where(*conds).order_by(rounds.c.id.desc())
    if limit is not None:
        q = q.limit(limit)
    return _records(store, q)


def rounds_text(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No rounds."
    lines = [f"{'id':>6}  {'table':<12} {'no.':>5}  {'started (UTC)':<19}  {'status':<6}  players"]
    for r in items:
        started = r["started_at"][:19].replace("T", " ")
        lines.append(
            f"{r['id']:>6}  {r['table']:<12} {r['number']:>5}  {started:<19}  {r['status']:<6}  "
            + _nets_text(r)
        )
    return "\n".join(lines)
