"""Recording rounds as they are played: write-ahead of effect.

A :class:`TableLog` appends to one table's chain. Each :meth:`RoundLog.commit` writes the
round's new events, the ledger entries of its money events, the round's row and (for a real
shoe) the shoe's state in **one** transaction; callers commit before they show or send what an
action did. Balances live in the ledger and are checked before anything is written: a player's
or the layout's balance never goes below zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pontoon.errors import InputError
from pontoon.events import Event
from pontoon.round import Round
from pontoon.shoe import Place, Shoe
from pontoon.store import chain
from pontoon.store.db import Batch, RoundWrite, Store, Written
from pontoon.store.shoestate import advance, snapshot
from pontoon.store.trust import table_state


class LedgerError(InputError):
    """A money movement would take an account below zero; nothing was written."""


@dataclass(slots=True)
class OpenRound:
    """An unfinished round found in the store."""

    id: int
    number: int
    events: list[Event]
    last_seq: int
    players: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Prepared:
    """A write made ready (:meth:`TableLog.prepare`): the batch for the store and what the
    balances will be once it is committed. ``upto``: the round's events it covers."""

    batch: Batch
    balances: dict[str, int]
    upto: int = 0
    place: Place | None = None  # where the shoe it writes whole stood


class TableLog:
    """The writer of one table. Keeps the chain's head and the balances in memory; a write by
    another process in between is refused (:class:`~pontoon.store.db.ConflictError`)."""

    def __init__(
        self,
        store: Store,
        table: str,
        *,
        top_up: bool = False,
        wallet: bool = False,
        remote: bool = False,
        fence: int | None = None,
    ) -> None:
        if not table or len(table) > 64:
            raise InputError("a table's name is 1 to 64 characters")
        if table.startswith("@"):
            raise InputError(f"a table's name may not start with '@' (the house's): {table!r}")
        self.store = store
        self.table = table
        # scripted rounds, and a wallet: players bring exactly what they stake
        self.top_up = top_up or wallet or remote
        # the players' wallets stand behind the table: what a wager needs beyond the player's
        # balance at the table is debited from the wallet, what a round leaves is credited
        self.wallet = wallet or remote
        self.remote = remote  # the wallets are an operator's (calls recorded, not balances)
        self.fence = fence  # the lease's fencing token every write carries (leased tables)
        self.buy_in = chain.WALLET if self.wallet else "buy-in"
        self.cash_out = chain.WALLET if self.wallet else "cash-out"
        store.ensure_table(table)
        self.reload()

    def reload(self) -> None:
        state = table_state(self.store, self.table)
        assert state is not None
        self.head_seq = state.head_seq
        self.head_hash = state.head_hash
        self.balances = state.balances
        self.last_number = state.last_number
        self.open_ids = state.open_rounds
        # the shoe as stored: (seq, its text when last written whole, cards drawn since)
        self._shoe = None if state.shoe is None else (*state.shoe, 0)
        self._mark = state.shoe_mark  # where the store says the shoe stands (signed with it)
        self._place: Place | None = None  # where the shoe this log last wrote whole stood

    @property
    def shoe_state(self) -> tuple[int, str] | None:
        """The table's shoe as stored: the ``seq`` of the write that left it so, its text."""
        if self._shoe is None:
            return None
        seq, text, drawn = self._shoe
        return seq, advance(text, drawn)

    def balance(self, player: str) -> int:
        return self.balances.get(chain.account(player), 0)

    # ------------------------------------------------------------------ money
    def _funded(
        self, items: Iterable[tuple[Event, bool]]
    ) -> tuple[list[tuple[Event, bool]], dict[str, int]]:
        """The events with any top-up deposits they need, and the balances after them."""
        balances = dict(self.balances)
        out: list[tuple[Event, bool]] = []
        for e, in_round in items:
            money = chain.entry(e)
            if money is not None:
                _, src, dst, amount = money
                if amount <= 0:
                    raise LedgerError(f"a {e.kind} of {amount} is not a movement of money")
                short = amount - balances.get(src, 0)
                if short > 0 and src not in (chain.HOUSE, chain.CASHIER):
                    if self.top_up and src.startswith("player:"):
                        deposit = Event(
                            "deposit", player=e.player, amount=short, detail=self.buy_in
                        )
                        out.append((deposit, False))
                        balances[src] = balances.get(src, 0) + short
                    else:
                        raise LedgerError(
                            f"{src} holds {balances.get(src, 0)}, too little for a {e.kind} "
                            f"of {amount}"
                        )
                balances[src] = balances.get(src, 0) - amount
                balances[dst] = balances.get(dst, 0) + amount
            out.append((e, in_round))
        return out, balances

    def prepare(
        self,
        items: list[tuple[Event, bool]],
        round_write: RoundWrite | None = None,
        shoe: Shoe | None = None,
    ) -> Prepared:
        """The batch that appends ``items`` after the table's head, its money checked
        (:class:`LedgerError` when it does not add up; nothing is written). ``shoe`` goes
        whole, or — when only cards were drawn from it since this log last wrote it whole —
        as their count (some 1.5 KB less to seal and to write)."""
        funded, balances = self._funded(items)
        text = drawn = place = None
        if shoe is not None:
            drawn = shoe.drawn_since(self._place) if self._place is not None else None
            if drawn is None:
                text, place = snapshot(shoe), shoe.place()
        batch = Batch(
            self.table,
            self.head_seq,
            self.head_hash,
            funded,
            round_write,
            text,
            drawn,
            wallet=self.wallet,
            remote={} if self.remote else None,
            fence=self.fence,
            shoe_mark=self._mark,
        )
        return Prepared(batch, balances, place=place)

    def applied(self, prepared: Prepared, written: Written) -> None:
        """The store has committed ``prepared``: the head and balances move on."""
        self.head_seq, self.head_hash = written.seq, written.hash
        self._mark = written.shoe_mark
        self.balances = prepared.balances
        batch = prepared.batch
        if batch.shoe is not None:
            self._shoe, self._place = (written.seq, batch.shoe, 0), prepared.place
        elif batch.drawn is not None and self._shoe is not None:
            self._shoe = (written.seq, self._shoe[1], batch.drawn)

    def append(
        self,
        items: list[tuple[Event, bool]],
        round_write: RoundWrite | None = None,
        shoe: Shoe | None = None,
    ) -> int | None:
        """Append events in one transaction; returns the round's id (or None)."""
        prepared = self.prepare(items, round_write, shoe)
        written = self.store.append(prepared.batch)
        self.applied(prepared, written)
        return written.round_id

    def deposit(self, player: str, amount: int, detail: str = "buy-in") -> None:
        if amount > 0:
            self.append([(Event("deposit", player=player, amount=amount, detail=detail), False)])

    def withdraw(self, player: str, amount: int | None = None, detail: str = "cash-out") -> int:
        """Pay ``amount`` (default: everything) out of the player's balance."""
        amount = self.balance(player) if amount is None else amount
        if amount > 0:
            self.append([(Event("withdraw", player=player, amount=amount, detail=detail), False)])
        return amount

    def prepare_leave(self, player: str) -> Prepared:
        """A player leaves the table: the whole balance is paid out (a withdrawal, as
        ``pontoon play --db`` cashes out) and the player's session ends, in one write."""
        amount = self.balance(player)
        items: list[tuple[Event, bool]] = []
        if amount > 0:
            items.append(
                (Event("withdraw", player=player, amount=amount, detail=self.cash_out), False)
            )
        prepared = self.prepare(items)
        prepared.batch.close = player
        return prepared

    def _cash_out(
        self, items: list[tuple[Event, bool]], players: list[str]
    ) -> list[tuple[Event, bool]]:
        """The withdrawals that pay ``players`` their whole balance out once ``items`` are
        written (a scripted round's end; a wallet table's round: back to the wallets)."""
        _, after = self._funded(items)
        out: list[tuple[Event, bool]] = []
        for player in players:
            left = after.get(chain.account(player), 0)
            if left > 0:
                withdraw = Event("withdraw", player=player, amount=left, detail=self.cash_out)
                out.append((withdraw, False))
        return out

    # ------------------------------------------------------------------ rounds
    def start(self, rnd: Round) -> RoundLog:
        """Record ``rnd`` (not yet committed) as the table's next round."""
        return RoundLog(self, rnd, None, self.last_number + 1)

    def open_round(self) -> OpenRound | None:
        """The table's unfinished round, if the last process stopped in the middle of one."""
        if not self.open_ids:
            return None
        rid = self.open_ids[-1]
        row = self.store.round_row(rid)
        assert row is not None
        stored = self.store.round_events(rid)
        return OpenRound(
            rid,
            int(row["number"]),
            [s["event"] for s in stored],
            int(row["last_seq"]),
            set(row["players"]),
        )

    def void(self, open_round: OpenRound, reason: str) -> list[Event]:
        """16.5: void an unfinished round: every wager still on the layout goes back to its
        player; wagers already settled stand. Returns the events written."""
        escrow: dict[tuple[int | None, str], int] = {}
        nets: dict[str, int] = {p: 0 for p in open_round.players}
        house = 0
        for e in open_round.events:
            money = chain.entry(e)
            if money is None or e.player is None or e.amount is None:
                continue
            kind = e.kind
            key = (e.box, e.player)
            if kind == "stake":
                escrow[key] = escrow.get(key, 0) + e.amount
                nets[e.player] = nets.get(e.player, 0) - e.amount
            elif kind in ("return", "collect"):
                escrow[key] = escrow.get(key, 0) - e.amount
                if kind == "return":
                    nets[e.player] = nets.get(e.player, 0) + e.amount
                else:
                    house += e.amount
            elif kind == "pay":
                nets[e.player] = nets.get(e.player, 0) + e.amount
                house -= e.amount
        out = [Event("void", detail=reason, rule="16.5")]
        for (box, player), amount in sorted(
            escrow.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])
        ):
            if amount > 0:
                out.append(Event("return", box=box, player=player, amount=amount, rule="16.5"))
                nets[player] += amount
        out.append(Event("end", detail="void", rule="16.5"))
        rw = RoundWrite(
            open_round.id,
            open_round.number,
            _rules_name(open_round.events),
            "void",
            house,
            nets,
            set(open_round.players),
        )
        items = [(e, True) for e in out]
        if self.wallet:  # what the void gave back goes back to the wallets
            items += self._cash_out(items, sorted(open_round.players))
        self.append(items, rw)
        self.open_ids = [i for i in self.open_ids if i != open_round.id]
        return out


def _rules_name(evts: list[Event]) -> str:
    return (evts[0].rule or "") if evts else ""


class RoundLog:
    """One round being recorded: :meth:`commit` writes what happened since the last commit."""

    def __init__(
        self,
        log: TableLog,
        rnd: Round,
        round_id: int | None,
        number: int,
        committed: int = 0,
        players: set[str] | None = None,
    ) -> None:
        self.log = log
        self.round = rnd
        self.id = round_id
        self.number = number
        self.committed = committed
        self.players: set[str] = set(players or ())
        self.written: dict[str, int] = {}  # the nets the store holds (unknown: rewrite)

    @property
    def pending(self) -> bool:
        return self.committed < len(self.round.events)

    def commit(self, shoe: Shoe | None = None, *, cash_out: bool = False) -> None:
        """Write the round's new events (and the shoe) in one transaction. ``cash_out``: then
        pay each of the round's players their whole balance out (scripted rounds)."""
        prepared = self.prepare(shoe, cash_out=cash_out)
        if prepared is not None:
            self.applied(prepared, self.log.store.append(prepared.batch))

    def prepare(self, shoe: Shoe | None = None, *, cash_out: bool = False) -> Prepared | None:
        """The write of the round's new events (None when there are none), for
        :meth:`commit` or a group commit (:meth:`~pontoon.store.db.Store.append_many`);
        :meth:`applied` once the store has committed it."""
        rnd = self.round
        new = rnd.events[self.committed :]
        if not new:
            return None
        items = [(e, True) for e in new]
        rw = RoundWrite(
            self.id,
            self.number,
            rnd.rules.name[:64],
            "over" if rnd.over else "open",
            rnd.house,
            dict(rnd.balance),
            set(self.players),
            dict(self.written),
        )
        if cash_out:
            items += self.log._cash_out(items, sorted(rnd.balance))
        prepared = self.log.prepare(items, rw, shoe)
        prepared.upto = len(rnd.events)
        return prepared

    def applied(self, prepared: Prepared, written: Written) -> None:
        """The store has committed ``prepared`` (made by :meth:`prepare`)."""
        rw = prepared.batch.round
        assert rw is not None
        self.log.applied(prepared, written)
        if self.id is None:
            self.id = written.round_id
            self.log.last_number = self.number
        assert self.id is not None
        if rw.status != "open":
            self.log.open_ids = [i for i in self.log.open_ids if i != self.id]
        elif self.id not in self.log.open_ids:
            self.log.open_ids.append(self.id)
        self.committed = prepared.upto
        self.players |= set(rw.nets)
        self.written = dict(rw.nets)
