"""Game recall: a player's last rounds (or any one round, for a supervisor) with every step,
the cards, the wagers and the player's balance before and after. What it shows is marked as
recall (``"recall": true``; the page and the text say so in words), never live play.

The balance is the built-in wallet's where the round's money came from the player's wallet
(a movement of it at the round's table among the round's events, between its first and last;
its entries carry the balance after each movement), else the player's balance at the table
(the ledger's): a round played on a table without accounts by a name that also has one shows
the table's money, not the wallet's.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.money import dollars, signed
from pontoon.store import chain
from pontoon.store.db import Store
from pontoon.store.schema import ledger, round_players, rounds, wallet_entries
from pontoon.store.show import event_text, replay_document

MARK = "GAME RECALL: a record of rounds already played, not live play"


def recall(store: Store, player: str, last: int = 10, *, empty: bool = False) -> dict[str, Any]:
    """The ``last`` rounds ``player`` played, newest first, each with its steps and the
    player's balance before and after it (none: an error, unless ``empty``)."""
    if not 1 <= last <= 100:
        raise InputError(f"--last must be between 1 and 100, not {last}")
    rp = round_players.c
    q = (
        select(rounds.c.id)
        .where(rounds.c.id == rp.round_id, rp.player == player, rounds.c.status != "open")
        .order_by(rounds.c.id.desc())
        .limit(last)
    )
    with store.read() as conn:
        ids = [int(i) for (i,) in conn.execute(q)]
    if not ids and not empty:
        raise InputError(f"no finished round of player {player!r} in the store")
    return {
        "recall": True,
        "mark": MARK,
        "player": player,
        "rounds": [recalled(store, rid, player) for rid in ids],
    }


def recalled(store: Store, round_id: int, player: str | None = None) -> dict[str, Any]:
    """One round as recall shows it: its record, its steps in words, its result, and
    ``player``'s balance before and after (every player's without ``player``)."""
    doc = replay_document(store, round_id)
    r = doc["round"]
    steps = []
    for e in doc["events"]:
        event = Event.from_dict({k: v for k, v in e.items() if k not in ("seq", "at", "hash")})
        steps.append(
            {"seq": e["seq"], "at": e["at"], "text": event_text(event)}
            | {k: v for k, v in e.items() if k not in ("seq", "at", "hash")}
        )
    names = [player] if player is not None else sorted(r["players"])
    seqs = [int(e["seq"]) for e in doc["events"]] or [0]
    with store.read() as conn:
        balances = {p: _balances(conn, r, p, (min(seqs), max(seqs))) for p in names}
    out: dict[str, Any] = {
        "recall": True,
        "round": r["id"],
        "table": r["table"],
        "number": r["number"],
        "status": r["status"],
        "rules": r["rules"],
        "started_at": r["started_at"],
        "ended_at": r["ended_at"],
        "reconstructed": doc["reconstructed"],
        "events": steps,
        "result": doc.get("result", {}),
    }
    if player is not None:
        before, after, source = balances[player]
        out |= {"net": r["players"].get(player, 0), "balance_before": before}
        out |= {"balance_after": after, "balance_of": source}
    else:
        out["players"] = {
            p: {"net": r["players"][p], "balance_before": b, "balance_after": a, "balance_of": s}
            for p, (b, a, s) in balances.items()
        }
    return out


def _balances(
    conn: Connection, r: dict[str, Any], player: str, seqs: tuple[int, int]
) -> tuple[int, int, str]:
    """(before, after, "wallet" or "table") of ``player`` around round ``r`` (its events'
    ``seqs``, first and last): the balance before the round's first event and after its last
    transaction (the cash-out with it)."""
    start, end = r["started_at"], r["ended_at"] or r["started_at"]
    w = wallet_entries.c
    of_round = [w.account == player, w.table_id == r["table"], w.seq.between(*seqs)]
    if conn.execute(select(w.key).where(*of_round).limit(1)).first():  # its wallet's money
        newest = (w.at.desc(), w.seq.desc().nulls_last())
        q = select(w.balance).where(w.account == player).order_by(*newest).limit(1)
        before = conn.execute(q.where(w.at < start)).scalar()
        after = conn.execute(q.where(w.at <= end)).scalar()
        return int(before or 0), int(after or 0), "wallet"
    acct = chain.account(player)
    return (
        _held(conn, r["table"], acct, start, False),
        _held(conn, r["table"], acct, end, True),
        "table",
    )


def _held(conn: Connection, table: str, acct: str, moment: str, inclusive: bool) -> int:
    """What ``acct`` held at ``table`` at ``moment`` (after its entries then, if inclusive)."""
    t = ledger.c
    upto = t.at <= moment if inclusive else t.at < moment
    total = func.coalesce(func.sum(t.amount), 0)
    into = conn.execute(select(total).where(t.table_id == table, t.to_account == acct, upto))
    out = conn.execute(select(total).where(t.table_id == table, t.from_account == acct, upto))
    return int(into.scalar() or 0) - int(out.scalar() or 0)


def recall_text(doc: dict[str, Any]) -> str:
    """Recall in words, headed and footed by its mark."""
    lines = [f"*** {MARK} ***", ""]
    items = doc.get("rounds", [doc])
    for r in items:
        lines.append(
            f"Round {r['round']}: table {r['table']!r} round {r['number']}, rules {r['rules']}, "
            f"{r['status']}; started {r['started_at']}"
        )
        if "balance_before" in r:
            lines.append(
                f"  {doc.get('player', '')} balance ({r['balance_of']}): "
                f"{dollars(r['balance_before'])} before, {dollars(r['balance_after'])} after "
                f"(net {signed(r['net'])})"
            )
        for p, b in r.get("players", {}).items():
            lines.append(
                f"  {p} balance ({b['balance_of']}): {dollars(b['balance_before'])} before, "
                f"{dollars(b['balance_after'])} after (net {signed(b['net'])})"
            )
        for step, e in enumerate(r["events"], 1):
            rule = f"  (rule {e['rule']})" if e.get("rule") and e["kind"] != "rules" else ""
            lines.append(f"  {step:>4}. {e['text']}{rule}")
        lines.append("")
    lines.append(f"*** end of recall: {len(items)} round(s), not live play ***")
    return "\n".join(lines)


__all__ = ["MARK", "recall", "recall_text", "recalled"]
