"""What a recorded round shows of its players to whom.

At the table, anyone watching sees the names and the chips in play, as at a casino table; a
balance is its player's alone. A record is another matter: the history and the replays, kept
for ever and read by anyone, would give every player's result round after round by name. So
a history served to a watcher gives each round and the house's result, and a player their
own net too; in a replay served to a watcher every player is ``player 1``, ``player 2``, …
(in the order they first wager in that round, afresh in each round: rounds cannot be linked
by them), and a player sees their own name and the others so; the supervisor sees all.

>>> doc = {"round": {"players": {"ana": 500, "ben": -500}, "house": 0},
...        "events": [{"kind": "wager", "player": "ben", "box": 1},
...                   {"kind": "wager", "player": "ana", "box": 2}]}
>>> masked(doc, keep="ana")["round"]["players"]
{'ana': 500, 'player 1': -500}
>>> masked(doc, keep=None)["events"][1]["player"]
'player 2'
>>> own({"id": 7, "players": {"ana": 500, "ben": -500}, "house": 0}, "ben")
{'id': 7, 'players': {'ben': -500}, 'house': 0}
"""

from __future__ import annotations

from typing import Any

NAMED = ("player", "seated")  # a key whose value is a player's name
BY_NAME = ("players", "original", "insurance")  # a key whose dict is keyed, or list made, of names


def own(record: dict[str, Any], keep: str | None) -> dict[str, Any]:
    """A history record (``pontoon rounds --json``) with only ``keep``'s net in its
    ``players`` (none for a watcher)."""
    mine = {p: n for p, n in record["players"].items() if p == keep}
    return record | {"players": mine}


def masked(doc: dict[str, Any], keep: str | None) -> dict[str, Any]:
    """A replay document (``pontoon replay --json``) with every player but ``keep`` named
    ``player N``, numbered in the order they first appear in its events; ``doc`` itself is
    unchanged."""
    order: dict[str, None] = {}
    for e in doc["events"]:
        if isinstance(e.get("player"), str):
            order.setdefault(e["player"], None)
    for p in doc["round"].get("players") or {}:
        order.setdefault(p, None)  # (a player with no event: none in a consistent record)
    names = {p: p if p == keep else f"player {i}" for i, p in enumerate(order, 1)}
    result: dict[str, Any] = rename(doc, names)
    return result


def rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every player's name in it as ``names`` has it (one it lacks, which a
    consistent record does not hold, as ``player ?``: never shown by mistake)."""

    def name(n: Any) -> Any:
        return names.get(n, "player ?") if isinstance(n, str) else n

    if isinstance(value, list):
        return [rename(v, names) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for k, v in value.items():
        if k in NAMED:
            out[k] = name(v)
        elif k in BY_NAME and isinstance(v, dict):
            out[k] = {name(p): rename(x, names) for p, x in v.items()}
        elif k in BY_NAME and isinstance(v, list) and all(isinstance(p, str) for p in v):
            out[k] = [name(p) for p in v]
        else:
            out[k] = rename(v, names)
    return out


def masked_recall(doc: dict[str, Any], keep: str) -> dict[str, Any]:
    """A player's recall (:func:`pontoon.audit.recall.recall`) with the other players of each
    round named ``player N`` as :func:`masked` names them, and each step's words told again
    with those names."""
    from pontoon.events import Event
    from pontoon.store.show import event_text

    rounds = []
    for r in doc["rounds"]:
        order: dict[str, None] = {}
        for e in r["events"]:
            if isinstance(e.get("player"), str):
                order.setdefault(e["player"], None)
        names = {p: p if p == keep else f"player {i}" for i, p in enumerate(order, 1)}
        events = []
        for e in rename(r["events"], names):
            fields = {k: v for k, v in e.items() if k not in ("seq", "at", "text")}
            events.append(e | {"text": event_text(Event.from_dict(fields))})
        rounds.append(r | {"events": events, "result": rename(r["result"], names)})
    return doc | {"rounds": rounds}
