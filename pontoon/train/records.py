"""A learner's records in the round store: every graded decision of every drill session, the
weak-cells schedule rebuilt from them, and the progress from session to session.

The schedule is never stored: it is the record of (cell, right or wrong) replayed through
:class:`~pontoon.train.schedule.Schedule`, so a learner's weak cells follow them from one
session to the next, and from SQLite to PostgreSQL with the records.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from pontoon.output import save_figure
from pontoon.train.schedule import Schedule
from pontoon.train.strategy import Decision


def session_stamp() -> str:
    """A drill session's name: when it began (UTC, to the microsecond: two sessions begun
    in one second are two sessions)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


DRILLS = ("strategy", "count", "dealer")
COST: Final = {  # what a drill's cost is, for the plot
    "strategy": "EV lost per 100 decisions (wagers)",
    "count": "counts off, per 100 answers",
    "dealer": "dollars misnamed, per 100 answers",
}


def row(
    learner: str, drill: str, session: str, rules: str, mode: str, **fields: Any
) -> dict[str, Any]:
    """One row of ``drill_decisions`` (the text fields cut to their columns' sizes)."""
    out: dict[str, Any] = {"learner": learner, "drill": drill, "session": session}
    out.update(rules=rules, mode=mode)
    out.update(hand="", dealer="", cell="", answer="", best="", chart="", correct=False, cost=0.0)
    out.update(fields)
    for name, size in (("hand", 64), ("dealer", 4), ("cell", 16), ("answer", 16), ("best", 16)):
        out[name] = str(out[name])[:size]
    return out


def rows_of(
    learner: str, session: str, rules: str, mode: str, decisions: list[Decision]
) -> list[dict[str, Any]]:
    """The store's rows (``drill_decisions``) of a strategy drill's decisions."""
    return [
        row(
            learner,
            "strategy",
            session,
            rules,
            mode,
            hand=" ".join(c.code for c in d.cards),
            dealer=d.up.code,
            cell=d.grade.cell,
            answer=d.grade.answer,
            best=d.grade.best,
            chart=d.grade.chart,
            correct=d.grade.correct,
            cost=d.grade.cost,
        )
        for d in decisions
    ]


def answer_rows(
    learner: str, drill: str, session: str, rules: str, mode: str, docs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The rows of the counting or the dealer drill's answers (their ``--json`` decisions)."""
    return [
        row(
            learner,
            drill,
            session,
            rules,
            mode,
            hand=d.get("cards", d.get("question", "")),
            cell=d["kind"],
            answer=d["answer"],
            best=d["best"],
            correct=d["correct"],
            cost=float(d["cost"]),
        )
        for d in docs
    ]


def schedule_of(rows: list[dict[str, Any]]) -> Schedule:
    """The weak-cells schedule a learner's record leaves."""
    s = Schedule()
    for r in rows:
        s.answer(str(r["cell"]), bool(r["correct"]))
        s.tick()
    return s


def progress(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per session, oldest first: decisions, accuracy and EV lost per 100 decisions."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(str(r["session"]), []).append(r)
    out = []
    for session, rs in by.items():
        n = len(rs)
        out.append(
            {
                "session": session,
                "decisions": n,
                "accuracy": sum(bool(r["correct"]) for r in rs) / n,
                "ev_lost_per_100": 100 * sum(float(r["cost"]) for r in rs) / n,
            }
        )
    return out


def plot_progress(
    rows: list[dict[str, Any]], learner: str, path: str, drill: str = "strategy"
) -> None:
    """Accuracy and the cost per 100 decisions, session by session, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sessions = progress(rows)
    x = list(range(1, len(sessions) + 1))
    fig, left = plt.subplots(figsize=(7, 4), dpi=120)
    left.plot(x, [100 * s["accuracy"] for s in sessions], "o-", color="tab:blue")
    left.set_xlabel("session")
    left.set_ylabel("decisions right (%)", color="tab:blue")
    left.set_ylim(0, 100)
    right = left.twinx()
    right.plot(x, [s["ev_lost_per_100"] for s in sessions], "s--", color="tab:red")
    right.set_ylabel(COST[drill], color="tab:red")
    right.set_ylim(bottom=0)
    left.set_xticks(x)
    left.set_title(f"{drill.capitalize()} drill: {learner}")
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


__all__ = [
    "DRILLS",
    "answer_rows",
    "plot_progress",
    "progress",
    "row",
    "rows_of",
    "schedule_of",
    "session_stamp",
]
