"""Table reports against theory: for each table, and each day or shift of it, the rounds
played, the initial wagers, the house's win and hold, the theoretical win (the exact house
edge of the round's rule set times its initial wagers: :mod:`pontoon.audit.theory`) and the
band the win falls in 95 % of the time, flagged when it falls outside; the same per player.

The band is a normal approximation: theoretical win ± 1.96 standard deviations, the variance
summed over rounds from each round's wagers box by box. The house's win counts every wager
the store records (insurance and side wagers too); the theory counts the initial wagers on
the boxes, whose money is all a table without those wagers moves. Voided rounds (16.5) move
no money and are counted apart. A flag at 95 % comes to one honest period in twenty: it asks
for a look, not a verdict; ``z`` says how far outside.

The report also lists the open disputes with an operator's wallet (``disputes``:
:func:`pontoon.audit.disputes.open_disputes`), whatever the dates.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import or_, select

from pontoon.audit.disputes import open_disputes
from pontoon.audit.theory import Theory, theory
from pontoon.errors import InputError
from pontoon.store.db import Store
from pontoon.store.schema import events, round_players, rounds
from pontoon.store.show import where_rounds
from pontoon.vocab import SEVENS, EventKind, Outcome

Z95: Final = 1.959963984540054
PERIODS: Final = ("day", "shift")
SHIFT_HOURS: Final = 8  # three shifts a day, from midnight UTC


@dataclass
class Tally:
    """What a table, a period or a player adds up to."""

    rounds: int = 0
    void: int = 0
    wagered: int = 0  # the initial wagers, cents
    win: int = 0  # the house's, cents
    theoretical: float = 0.0
    variance: float = 0.0  # cents²
    rules: set[str] = field(default_factory=set)  # the rule sets' names

    def add(self, wagered: int, win: int, t: Theory, variance: float) -> None:
        self.rounds += 1
        self.wagered += wagered
        self.win += win
        self.theoretical += t.edge * wagered
        self.variance += variance
        self.rules.add(t.rules.name)

    def figures(self) -> dict[str, Any]:
        """The figures as the report gives them (money in whole cents).

        >>> t = Tally(rounds=2, wagered=1000, win=30, theoretical=10.0, variance=400.0)
        >>> f = t.figures()
        >>> f["hold"], f["theoretical_win"], f["band95"], f["z"], f["flagged"]
        (0.03, 10, [-30, 50], 1.0, False)
        """
        sd = math.sqrt(self.variance)
        lo, hi = self.theoretical - Z95 * sd, self.theoretical + Z95 * sd
        z = (self.win - self.theoretical) / sd if sd > 0 else 0.0
        return {
            "rounds": self.rounds,
            "void_rounds": self.void,
            "wagered": self.wagered,
            "win": self.win,
            "hold": self.win / self.wagered if self.wagered else None,
            "theoretical_win": round(self.theoretical),
            "theoretical_hold": self.theoretical / self.wagered if self.wagered else None,
            "sd": round(sd),
            "band95": [math.floor(lo), math.ceil(hi)],
            "z": round(z, 3),
            "flagged": bool(self.rounds) and not lo <= self.win <= hi,
        }


@dataclass
class _Round:
    table: str
    started: str
    status: str
    house: int
    rules: str = ""
    boxes: dict[int, int] = field(default_factory=dict)  # initial wagers on each box
    players: dict[str, dict[int, int]] = field(default_factory=dict)  # theirs, by box
    nets: dict[str, int] = field(default_factory=dict)


def period_of(started: str, period: str) -> str:
    """The day (``2026-12-02``) or shift (``2026-12-02 08-16``) a round started in (UTC).

    >>> period_of("2026-12-02T09:30:00.000000Z", "shift")
    '2026-12-02 08-16'
    """
    if period == "day":
        return started[:10]
    h = int(started[11:13]) // SHIFT_HOURS * SHIFT_HOURS
    return f"{started[:10]} {h:02d}-{h + SHIFT_HOURS:02d}"


def _read(
    store: Store, table: str | None, since: str | None, until: str | None
) -> dict[int, _Round]:
    conds = [rounds.c.status != "open", *where_rounds(table, since, until)]
    chosen = select(rounds.c.id).where(*conds)
    e = events.c
    found: dict[int, _Round] = {}
    with store.read() as conn:
        q = select(rounds.c.id, rounds.c.table_id, rounds.c.started_at, rounds.c.status)
        for r in conn.execute(q.add_columns(rounds.c.house).where(*conds)):
            found[int(r.id)] = _Round(str(r.table_id), str(r.started_at), str(r.status), r.house)
        of_rounds = e.round_id.in_(chosen)
        q = select(e.round_id, e.detail).where(e.kind == EventKind.RULES, of_rounds)
        for rules_row in conn.execute(q):
            found[int(rules_row.round_id)].rules = str(rules_row.detail)
        initial = or_(e.detail.is_(None), e.detail != SEVENS)
        q = select(e.round_id, e.box, e.player, e.amount)
        for rid, box, player, amount in conn.execute(
            q.where(e.kind == EventKind.WAGER, initial, of_rounds)
        ):
            rnd = found[int(rid)]
            rnd.boxes[box] = rnd.boxes.get(box, 0) + amount
            mine = rnd.players.setdefault(player, {})
            mine[box] = mine.get(box, 0) + amount
        # each wager's last outcome (a settled wager voided after: 15.5(a), 16.5), the side
        # wager's aside; a box whose every wager ends void had no game played on it
        last: dict[tuple[int, int, int | None, str], str] = {}
        main = or_(e.rule.is_(None), e.rule != SEVENS)
        ends = select(e.round_id, e.box, e.hand, e.player, e.detail).order_by(e.seq)
        for rid, box, hand, player, outcome in conn.execute(
            ends.where(e.kind == EventKind.OUTCOME, main, of_rounds)
        ):
            last[(int(rid), box, hand, str(player))] = str(outcome)
        ended: dict[tuple[int, int], set[str]] = defaultdict(set)
        for (rid, box, _, _), outcome in last.items():
            ended[(rid, box)].add(outcome)
        for (rid, box), seen in ended.items():
            if seen != {Outcome.VOID}:
                continue
            rnd = found[rid]  # its wagers returned: none of them count
            rnd.boxes.pop(box, None)
            for boxes in rnd.players.values():
                boxes.pop(box, None)
            rnd.players = {p: boxes for p, boxes in rnd.players.items() if boxes}
        rp = round_players.c
        q = select(rp.round_id, rp.player, rp.net).where(rp.round_id.in_(chosen))
        for net in conn.execute(q):
            found[int(net.round_id)].nets[str(net.player)] = int(net.net)
    return found


def table_report(
    store: Store,
    *,
    table: str | None = None,
    since: str | None = None,
    until: str | None = None,
    period: str = "day",
    series: bool = False,
) -> dict[str, Any]:
    """The report's document: ``tables``, each with its ``periods`` and ``players``; with
    ``series``, each table's running ``win``, ``theoretical`` and ``sd`` after each round
    (what the plot draws); ``disputes``, the open disputes with an operator's wallet (of
    ``table`` only, when given)."""
    if period not in PERIODS:
        raise InputError(f"--period is one of {', '.join(PERIODS)}, not {period!r}")
    found = _read(store, table, since, until)
    disputes = open_disputes(store, table)
    if table and not found and not disputes:
        raise InputError(f"no finished round of table {table!r} in the store")
    tables: dict[str, Tally] = defaultdict(Tally)
    periods: dict[tuple[str, str], Tally] = defaultdict(Tally)
    players: dict[tuple[str, str], Tally] = defaultdict(Tally)
    theories: dict[str, Theory] = {}
    runs: dict[str, dict[str, list[float]]] = defaultdict(
        lambda: {"win": [], "theoretical": [], "sd": []}
    )
    for _rid, r in sorted(found.items()):
        key = (r.table, period_of(r.started, period))
        if r.status == "void" or not r.boxes:
            tables[r.table].void += 1
            periods[key].void += 1
            continue
        t = theories.get(r.rules) or theories.setdefault(r.rules, theory(r.rules))
        wagered = sum(r.boxes.values())
        variance = t.round_variance(list(r.boxes.values()))
        win = r.house
        tally = tables[r.table]
        tally.add(wagered, win, t, variance)
        if series:
            run = runs[r.table]
            run["win"].append(tally.win)
            run["theoretical"].append(round(tally.theoretical, 2))
            run["sd"].append(round(math.sqrt(tally.variance), 2))
        periods[key].add(wagered, win, t, variance)
        for p, boxes in r.players.items():
            mine = list(boxes.values())
            players[(r.table, p)].add(sum(mine), -r.nets.get(p, 0), t, t.round_variance(mine))
    out = []
    for name in sorted(tables):
        row: dict[str, Any] = {"table": name} | tables[name].figures()
        row["rules"] = sorted(tables[name].rules)
        row["periods"] = [
            {"period": p} | tally.figures()
            for (tn, p), tally in sorted(periods.items())
            if tn == name
        ]
        row["players"] = [
            {"player": p} | tally.figures()
            for (tn, p), tally in sorted(players.items())
            if tn == name
        ]
        if series:
            row["series"] = runs[name]
        out.append(row)
    return {
        "period": period,
        "from": since,
        "to": until,
        "confidence": 0.95,
        "theory": [
            {"rules": t.rules.name, "edge": t.edge, "variance": t.variance}
            | {"covariance": t.covariance, "covariance_se": t.covariance_se}
            | {"precision": t.exact}
            for t in theories.values()
        ],
        "tables": out,
        "disputes": disputes,
    }


__all__ = ["PERIODS", "Tally", "period_of", "table_report"]
