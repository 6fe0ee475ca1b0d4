"""``pontoon verify``: every table's hash chain, the ledger, the rounds, and each round's log
against the rules engine.

What is checked, table by table, in chain order:

1. the events are numbered 1, 2, 3, ... and each hash is ``link(previous hash, content)``;
   the table's recorded head is the chain's last event (nothing cut off the end);
2. the ledger holds exactly one entry per money event, equal to what the event says, and no
   other; no player's balance nor the layout ever goes below zero; house, players and layout
   together hold what was deposited less what was withdrawn;
3. each round's row and players agree with its events (status, times, house, nets, numbers);
4. each round's log replays through the engine to the same log (8.6), and a finished round
   leaves nothing on the layout: no wager is settled twice or left unsettled;
5. every wallet equals its ledger: an account's balance is what its movements add up to;
   each debit and credit of a table (or call to an operator's wallet that stands for one) is
   the deposit (``wallet``) or withdrawal of the event it names, with its player and amount,
   and every such event has its movement;
6. each table's head, and where its shoe stands, is covered by a genuine signature of this
   store under one of the public keys given (:mod:`pontoon.store.heads`): a chain recomputed
   by anyone without the private key is caught here;
7. every shoe revealed is the one committed to at its shuffle, and every card the record shows
   leaving it left it in its order (:mod:`pontoon.store.commitments`);
8. every money and control row outside the tables' chains (accounts and roles, cashiers'
   movements, limits and pauses, table settings) is as the house's own chain last recorded
   it (:mod:`pontoon.store.house`);
9. with ``anchors`` (the signed heads kept outside the store, :mod:`pontoon.store.anchors`):
   every genuine anchored head of this store is in its chain, with the same hash — a store
   restored to an earlier copy, cut short, or rewritten since is caught, naming the table and
   the last round it lacks.

The first problem found is *the first broken link*; later ones may follow from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from pontoon.errors import PontoonError
from pontoon.events import Event, upgraded
from pontoon.replay import replay
from pontoon.store import chain
from pontoon.store.anchors import read
from pontoon.store.commitments import check as shoes_check
from pontoon.store.commitments import unrevealed
from pontoon.store.db import Store, event_of
from pontoon.store.heads import Head, Signed, check, genuine, heads_of
from pontoon.store.house import HOUSE
from pontoon.store.house import check as house_check
from pontoon.store.roles import IN
from pontoon.store.schema import (
    accounts,
    events,
    lease_log,
    ledger,
    operator_calls,
    round_players,
    rounds,
    signatures,
    tables,
    wallet_entries,
)
from pontoon.store.signing import PublicKeys, load_public_keys
from pontoon.store.trust import signed_row, stored_head


@dataclass(slots=True)
class Report:
    tables: int = 0
    events: int = 0
    rounds: int = 0
    entries: int = 0
    wallets: int = 0
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)
    balances: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what holds, but a reader should know

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "first_broken_link": self.problems[0] if self.problems else None,
            "problems": self.problems,
            "notes": self.notes,
            "tables": self.tables,
            "events": self.events,
            "rounds": self.rounds,
            "ledger_entries": self.entries,
            "wallets": self.wallets,
            "heads": {t: {"seq": s, "hash": h} for t, (s, h) in self.heads.items()},
            "balances": self.balances,
        }


@dataclass(slots=True)
class _Stored:
    seq: int
    round_id: int | None
    at: str
    event: Event
    hash: str = ""


def verify(store: Store, public: PublicKeys | None = None, anchors: str | None = None) -> Report:
    """The store checked (see above) with the record's public keys (None: those of
    ``$PONTOON_RECORD_KEY`` or the default key file) and, if given, the anchors file."""
    if public is None:
        public = load_public_keys()
    report = Report()
    chains: dict[str, dict[int, str]] = {}  # each table's hashes, by seq
    with store.read() as conn:
        heads = {r.id: (int(r.head_seq), str(r.head_hash)) for r in conn.execute(select(tables))}
        chain_tables = sorted(
            set(heads) | set(conn.execute(select(events.c.table_id).distinct()).scalars())
        )
        round_rows = {int(r.id): dict(r._mapping) for r in conn.execute(select(rounds))}
        players: dict[int, dict[str, int]] = defaultdict(dict)
        for r in conn.execute(select(round_players)):
            players[int(r.round_id)][str(r.player)] = int(r.net)
        report.tables = len(chain_tables)
        report.rounds = len(round_rows)
        seen_rounds: set[int] = set()
        house_records: list[Event] = []
        moved: dict[tuple[str, int], tuple[str, str, int]] = {}  # the wallets' events
        taken = {
            (str(t), int(f))
            for t, f in conn.execute(select(lease_log.c.table_id, lease_log.c.fence))
        }
        for table in chain_tables:
            _check_fences(conn, table, taken, report)
            stored = _check_chain(conn, table, heads.get(table), report)
            chains[table] = {s.seq: s.hash for s in stored}
            mine = [(s.seq, s.round_id, s.event) for s in stored]
            report.problems += shoes_check(table, mine)
            report.notes += unrevealed(table, mine)
            if table in heads:
                _check_signed(conn, store, public, table, report)
            _check_ledger(conn, table, stored, report)
            for s in stored:
                e = s.event
                if e.kind in ("deposit", "withdraw") and e.detail == chain.WALLET:
                    kind = "debit" if e.kind == "deposit" else "credit"
                    moved[(table, s.seq)] = (str(e.player), kind, int(e.amount or 0))
            by_round: dict[int, list[_Stored]] = defaultdict(list)
            for s in stored:
                if s.round_id is not None:
                    by_round[s.round_id].append(s)
            _check_rounds(table, by_round, round_rows, players, report)
            seen_rounds |= set(by_round)
            if table == HOUSE:
                house_records = [s.event for s in stored]
        for rid, row in sorted(round_rows.items()):
            if rid not in seen_rounds:
                report.problems.append(
                    f"round {rid} (table {row['table_id']!r}): recorded but no event of its "
                    "chain belongs to it"
                )
        _check_wallets(conn, moved, report)
        report.problems += house_check(conn, house_records)
    with store.read() as conn:  # the store's own signatures: none past its chains
        rows = conn.execute(select(signatures).order_by(signatures.c.at))
        own = ((f"signature {r.id}", Signed(*(str(v) for v in r))) for r in rows)
        _check_past(store.store_id, public, own, "the store's signatures", chains, report)
    if anchors is not None:
        lines = ((f"anchors line {n}", a) for n, a in enumerate(read(anchors), 1))
        if not _check_past(store.store_id, public, lines, "the anchors", chains, report):
            report.problems.append(f"anchors {anchors}: no signed head of this store in it")
    return report


def _check_signed(conn: Any, store: Store, public: PublicKeys, table: str, report: Report) -> None:
    head, _, sid = stored_head(conn, table)
    wrong = check(public, store.store_id, head, signed_row(conn, sid))
    if wrong:
        report.problems.append(f"table {table!r}: {wrong}")


def _check_past(
    store_id: str,
    public: PublicKeys,
    signed: Iterable[tuple[str, Signed]],
    where: str,
    chains: dict[str, dict[int, str]],
    report: Report,
) -> int:
    """Every genuine signed head of this store among ``signed`` (labelled for messages) is
    in its table's chain, with its hash; per table, the first that is not (the store lacks
    it, or holds another event there) is named with the last round signed past what the store
    holds. A signature is checked only where its heads disagree with the store (one that
    agrees can do no harm). How many signed bodies of this store there were."""
    lacking: dict[str, tuple[Head, str]] = {}  # table -> (first signed head it lacks, at)
    rounds: dict[str, int] = {}  # table -> the last round signed past what the store holds
    mine = 0
    for label, one in signed:
        try:
            store, heads = heads_of(one)
        except (ValueError, KeyError, TypeError):
            report.problems.append(f"{label}: not a signed body")
            continue
        if store != store_id:
            continue  # another store's
        mine += 1
        missing = [
            h for h in heads.values() if h.seq and chains.get(h.table, {}).get(h.seq) != h.hash
        ]
        if not missing:
            continue
        wrong = genuine(public, one)
        if wrong:
            report.problems.append(f"{label}: {wrong}")
            continue
        for head in missing:
            lacking.setdefault(head.table, (head, one.at))
            if head.round is not None:
                rounds[head.table] = max(rounds.get(head.table, 0), head.round)
    for table, (head, at) in sorted(lacking.items()):
        ends = max(chains.get(table, {}), default=0)
        last = rounds.get(table)
        lacks = f"; the last round it lacks is round {last}" if last else ""
        if head.seq > ends:
            report.problems.append(
                f"table {table!r}: {where} hold its head at event {head.seq} (signed {at}), "
                f"the store ends at event {ends}: it was restored to an earlier copy or cut "
                f"short{lacks}"
            )
        else:
            report.problems.append(
                f"table {table!r} event {head.seq}: its hash is not the one {where} hold "
                f"(signed {at}): the store was restored to an earlier copy and written since, "
                f"or rewritten{lacks}"
            )
    return mine


def _check_wallets(
    conn: Any, moved: dict[tuple[str, int], tuple[str, str, int]], report: Report
) -> None:
    """Each account's balance against its movements; each table movement against its event."""
    sums: dict[str, int] = defaultdict(int)
    rows = list(conn.execute(select(wallet_entries).order_by(wallet_entries.c.key)))
    for r in rows:
        kind, amount = str(r.kind), int(r.amount)
        sums[str(r.account)] += amount if kind in IN else -amount
    # an operator's wallet: the calls that stand for recorded movements (done debits; credits,
    # done or still owed); its balances are the operator's, not ours
    c = operator_calls.c
    calls = conn.execute(
        select(operator_calls).where(
            c.seq.is_not(None), (c.status == "done") | (c.kind == "credit")
        )
    )
    for r in [*rows, *calls]:
        kind, amount = str(r.kind), int(r.amount)
        if r.table_id is None:
            continue
        where = (str(r.table_id), int(r.seq))
        event = moved.pop(where, None)
        if event != (str(r.account), kind, amount):
            said = "no wallet movement" if event is None else f"a {event[1]} of {event[2]}"
            report.problems.append(
                f"wallet of {r.account!r}: a {kind} of {amount} names table {where[0]!r} "
                f"event {where[1]}, which says {said}"
            )
    for (table, seq), (player, kind, amount) in sorted(moved.items()):
        report.problems.append(
            f"table {table!r} event {seq}: a {kind} of {amount} for {player!r} "
            "has no movement in the wallet"
        )
    for name, balance in conn.execute(select(accounts.c.name, accounts.c.balance)):
        report.wallets += 1
        if int(balance) != sums.get(str(name), 0):
            report.problems.append(
                f"wallet of {name!r}: balance {int(balance)}, its movements add up to "
                f"{sums.get(str(name), 0)}"
            )


def _check_chain(
    conn: Any, table: str, head: tuple[int, str] | None, report: Report
) -> list[_Stored]:
    """The table's events as far as the chain holds (the rest is not to be trusted)."""
    out: list[_Stored] = []
    prev, expected = chain.GENESIS, 1
    broken = False
    if head is None:
        report.problems.append(f"table {table!r}: events without a table record")
        broken = True
    rows = conn.execute(select(events).where(events.c.table_id == table).order_by(events.c.seq))
    for row in rows:
        report.events += 1
        if broken:
            continue
        seq = int(row.seq)
        e = event_of(row)
        rid = None if row.round_id is None else int(row.round_id)
        where = f"table {table!r} event {seq}" + (f" (round {rid})" if rid is not None else "")
        if seq != expected:
            what = "missing" if seq > expected else "out of order"
            report.problems.append(
                f"table {table!r} event {expected}: {what} (the next stored event is {seq})"
            )
            broken = True
            continue
        h = chain.link(prev, table, seq, rid, str(row.at), e)
        if h != row.hash:
            report.problems.append(
                f"{where}: its hash does not match its content and the previous link "
                f"(a {e.kind} event was changed, moved or inserted)"
            )
            broken = True
            continue
        out.append(_Stored(seq, rid, str(row.at), e, h))
        prev, expected = h, expected + 1
    if head is not None:
        report.heads[table] = head
        if not broken and (expected - 1, prev) != head:
            report.problems.append(
                f"table {table!r}: the head says event {head[0]} but the chain ends at event "
                f"{expected - 1} (events were removed from the end, or the head was changed)"
            )
    return out


def _check_fences(conn: Any, table: str, taken: set[tuple[str, int]], report: Report) -> None:
    """A leased table's events carry the fencing token they were written under: it never goes
    back along the chain (a process that had lost the table never wrote to it), and each was
    taken by one process (``lease_log``)."""
    e = events.c
    rows = conn.execute(
        select(e.seq, e.fence).where(e.table_id == table, e.fence.is_not(None)).order_by(e.seq)
    )
    last = None
    for seq, fence in rows:
        if (table, int(fence)) not in taken:
            report.problems.append(
                f"table {table!r} event {seq}: written under lease token {fence}, which no "
                "process took"
            )
        if last is not None and fence < last:
            report.problems.append(
                f"table {table!r} event {seq}: written under lease token {fence} after token "
                f"{last}: a process that had lost the table wrote to it"
            )
        last = fence if last is None else max(last, fence)


def _check_ledger(conn: Any, table: str, stored: list[_Stored], report: Report) -> None:
    derived: dict[int, tuple[Any, ...]] = {}
    for s in stored:
        money = chain.entry(s.event) if s.event.kind in chain.MONEY_KINDS else None
        if money is not None:
            derived[s.seq] = (s.round_id, s.at, money[0], s.event.player, *money[1:])
    last = stored[-1].seq if stored else 0
    found: set[int] = set()
    rows = conn.execute(select(ledger).where(ledger.c.table_id == table).order_by(ledger.c.seq))
    for r in rows:
        report.entries += 1
        seq = int(r.seq)
        have = (
            None if r.round_id is None else int(r.round_id),
            str(r.at),
            str(r.kind),
            r.player,
            str(r.from_account),
            str(r.to_account),
            int(r.amount),
        )
        if seq in found:
            report.problems.append(f"ledger of table {table!r}: two entries for event {seq}")
        found.add(seq)
        if seq > last:
            continue  # beyond the trusted chain: reported there
        if derived.get(seq) != have:
            want = derived.get(seq)
            report.problems.append(
                f"ledger of table {table!r}, entry for event {seq}: stored {_entry_text(have)}, "
                f"the chain says {_entry_text(want) if want else 'no money moved'}"
            )
    for seq in sorted(set(derived) - found):
        report.problems.append(
            f"ledger of table {table!r}: no entry for the {derived[seq][2]} of event {seq}"
        )
    balances: dict[str, int] = defaultdict(int)
    for seq in sorted(derived):
        _, _, kind, _, src, dst, amount = derived[seq]
        balances[src] -= amount
        balances[dst] += amount
        if src not in (chain.HOUSE, chain.CASHIER) and balances[src] < 0:
            report.problems.append(
                f"ledger of table {table!r}, event {seq}: {src} goes below zero "
                f"({balances[src]}) with a {kind} of {amount}"
            )
    inside = sum(v for k, v in balances.items() if k != chain.CASHIER)
    if inside != -balances.get(chain.CASHIER, 0):
        report.problems.append(
            f"ledger of table {table!r}: house, players and layout hold {inside}, but "
            f"{-balances.get(chain.CASHIER, 0)} was put in"
        )
    report.balances[table] = {k: v for k, v in sorted(balances.items()) if v}


def _entry_text(entry: tuple[Any, ...] | None) -> str:
    if entry is None:
        return "nothing"
    _, _, kind, _, src, dst, amount = entry
    return f"{kind} {amount} from {src} to {dst}"


def _check_rounds(
    table: str,
    by_round: dict[int, list[_Stored]],
    round_rows: dict[int, dict[str, Any]],
    players: dict[int, dict[str, int]],
    report: Report,
) -> None:
    numbers: list[tuple[int, int]] = []
    for rid, stored in sorted(by_round.items(), key=lambda kv: kv[1][0].seq):
        row = round_rows.get(rid)
        name = f"round {rid} (table {table!r})"
        if row is None:
            report.problems.append(f"{name}: its events have no round record")
            continue
        numbers.append((stored[0].seq, int(row["number"])))
        evts = [s.event for s in stored]
        # A round is over from its "end" event on; procedures for a completed round (16.3,
        # 16.8) may follow it.
        end = next((e for e in reversed(evts) if e.kind == "end"), None)
        status = "open" if end is None else ("void" if end.detail == "void" else "over")
        house = sum(e.amount or 0 for e in evts if e.kind == "collect")
        house -= sum(e.amount or 0 for e in evts if e.kind == "pay")
        nets: dict[str, int] = {}
        layout = 0
        for e in evts:
            if e.kind in ("stake", "return", "pay") and e.player is not None:
                sign = -1 if e.kind == "stake" else 1
                nets[e.player] = nets.get(e.player, 0) + sign * (e.amount or 0)
            if e.kind == "stake":
                layout += e.amount or 0
            elif e.kind in ("return", "collect"):
                layout -= e.amount or 0
        want = {
            "table_id": table,
            "status": status,
            "rules": (evts[0].rule or "")[:64],
            "started_at": stored[0].at,
            "ended_at": None if status == "open" else stored[-1].at,
            "first_seq": stored[0].seq,
            "last_seq": stored[-1].seq,
            "house": house,
        }
        for key, value in want.items():
            if row[key] != value:
                report.problems.append(
                    f"{name}: its record says {key} {row[key]!r}, its events say {value!r}"
                )
        if players.get(rid, {}) != nets:
            report.problems.append(
                f"{name}: its players' nets {players.get(rid, {})} differ from its events' {nets}"
            )
        if status != "open" and layout != 0:
            report.problems.append(
                f"{name}: {layout} is left on the layout at its end (a wager settled twice or "
                "never)"
            )
        problem = _replays(evts, status)
        if problem:
            report.problems.append(f"{name}: {problem}")
    for i, (_, number) in enumerate(sorted(numbers)):
        if number != i + 1:
            report.problems.append(
                f"table {table!r}: round number {number} where {i + 1} was expected"
            )
            break


def _replays(evts: list[Event], status: str) -> str | None:
    """None when the engine, replaying the round's decisions on its cards, writes the same
    log (for a void round: the log before the void)."""
    engine = evts
    if status == "void":
        cut = next((i for i, e in enumerate(evts) if e.kind == "void"), None)
        if cut is None:
            return "it ends as void but has no void event"
        engine = evts[:cut]
    try:
        again = replay(engine).events
        engine = [upgraded(e) for e in engine]  # an earlier version's log reads as today's
    except PontoonError as exc:
        return f"its log does not replay: {exc}"
    except (ValueError, KeyError, TypeError, AssertionError) as exc:
        return f"its log does not replay: {exc!r}"
    if again != engine:
        i = next((i for i, (a, b) in enumerate(zip(again, engine, strict=False)) if a != b), None)
        i = min(len(again), len(engine)) if i is None else i
        return f"its log differs from the engine's replay at its event {i + 1}"
    if status == "over" and not any(e.kind == "end" for e in engine):
        return "it is over but its log has no end"
    return None
