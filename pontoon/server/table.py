"""One table of the server: its rule set and limits, its round, its players and its record.

Every change happens under the table's :attr:`Table.lock`, one at a time; it is committed to
the store (write-ahead) before anybody is told of it. A state document never holds an undealt
card, the shoe, a burnt card or the hole card. It holds the commitment to the shoe in play,
recorded before its first card left it, and the shoes revealed last (``fairness``,
docs/operators/fairness.md): a round opens with the shuffle it needs
(:meth:`Round.ready_shoe`), so the new shoe's commitment is shown before the bets and the
deal; the pit boss's close reveals the shoe (a ``disclose`` event outside any round, once no
round is in play), and the table shuffles anew when it opens again.

Its parts: what it is made of (:mod:`pontoon.server.table_config`), what it tells each
client (:mod:`pontoon.server.table_state`), its timer with the interrupted-round policy
(:mod:`pontoon.server.table_timer`), and its debits from an operator's wallet
(:mod:`pontoon.server.table_wallet`); the table itself takes its players in and out,
applies their messages, commits and reveals.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pontoon.errors import IllegalAction, PontoonError
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.layout import Move
from pontoon.round import Round
from pontoon.shoe import Shoe, Shuffler, seeded
from pontoon.store.db import Store, WalletError, Written, token_digest
from pontoon.store.group import GroupWriter
from pontoon.store.recorder import LedgerError, Prepared, RoundLog, TableLog
from pontoon.store.revealed import Revealed, disclosed, recent, set_aside
from pontoon.store.session import recover
from pontoon.store.shoestate import restore
from pontoon.vocab import INSURANCE_ACTIONS, Phase, action_of

from .clients import Client, Session
from .errors import Refused
from .protocol import Act, Bet, Procedure
from .table_config import TableConfig, public_rules, with_limits
from .table_state import TableView
from .table_timer import TableTimer
from .table_wallet import Needs, Paid, RemoteWallet, match_debits, paying

R = TypeVar("R")
REVEALED_SHOWN = 5  # the shoes revealed last that a state lists
Mark = tuple[
    Round | None, RoundLog | None, tuple[int, object] | None, object | None, dict[str, int]
]
"""Where a table stood (:meth:`Table.mark`): its round, the round's log, the round's mark and,
between rounds, the shoe's (the next round may open with a shuffle)."""


class Table:
    """One table: its round, its players and its record, every change applied under its lock
    and committed before it is told. ``wallets``: the players' built-in wallets (account ->
    balance, shared by the tables and kept current by every write): a wager beyond a player's
    money at the table is debited from the wallet in the transaction of its event, and what a
    round leaves a player goes back to the wallet when the round ends. None: play money, a
    bankroll at joining."""

    def __init__(
        self,
        config: TableConfig,
        store: Store,
        writer: GroupWriter,
        wallets: dict[str, int] | None = None,
        remote: RemoteWallet | None = None,
        fence: int | None = None,
    ) -> None:
        self.config = config
        self.writer = writer  # the store's one writer: group commits shared by all tables
        self.name = config.name
        self.rules = config.rules
        self.natural = self.rules.natural_word
        self.public_rules = public_rules(self.rules)
        self.wallets = wallets
        self.remote = remote  # the wallets are an operator's: each movement is a call to it
        self.asking = 0  # messages waiting for the operator's wallet (the lock let go)
        self.log = TableLog(  # ``fence``: the lease's token, when processes share the store
            store, config.name, wallet=wallets is not None, remote=remote is not None, fence=fence
        )
        self.lock = asyncio.Lock()
        self.version = 0
        self.round: Round | None = None
        self.roundlog: RoundLog | None = None
        self.clients: set[Client] = set()
        self.names: set[str] = set()  # players who joined
        self.notes: list[str] = []
        self.last_result: dict[str, int] = {}
        self.view = TableView(self)  # what it tells each client, and the texts' caches
        self.timer = TableTimer(self)  # its timer, and the interrupted-round policy
        self.closed = False  # the pit boss closed the table: no new round (one in play ends)
        self.closed_by: str | None = None  # who closed it (the role), for the shoe's reveal
        self.revealed: list[Revealed] = []  # the shoes revealed last, oldest first
        self.shoe = self._recover()
        self.revealed = recent(store, config.name, REVEALED_SHOWN)
        self.names |= set(store.session_players(config.name))  # sessions outlive a restart
        now = time.monotonic()
        # when each player was last connected (a restart counts as a connection)
        self.seen: dict[str, float] = {n: now for n in self.names}
        if wallets is not None:
            self._back_to_wallets()
        if remote is not None:
            remote.serve(self.name)

    def _back_to_wallets(self) -> None:
        """At start: money left at the table outside a round in play (a round voided on
        recovery, 16.5) goes back to its players' wallets."""
        playing = self._in_round()
        left = [
            (n, b)
            for a, b in self.log.balances.items()
            if a.startswith("player:") and b > 0 and (n := a[len("player:") :]) not in playing
        ]
        items = [
            (Event("withdraw", player=n, amount=b, detail=self.log.cash_out), False)
            for n, b in sorted(left)
        ]
        if items:
            prepared = self.log.prepare(items)
            self.log.applied(prepared, self._moved(self.log.store.append(prepared.batch)))

    async def paying(self, step: Callable[[Paid], Awaitable[R]]) -> R:
        """``step(paid)`` under the table's lock, the operator asked between its passes with
        the lock let go (:func:`pontoon.server.table_wallet.paying`)."""
        return await paying(self, step)

    def _moved(self, written: Written) -> Written:
        """Note the wallets' balances a write moved."""
        if self.wallets is not None:
            self.wallets.update(written.wallets)
        return written

    # ------------------------------------------------------------------ recovery
    def _rng(self) -> Shuffler:
        return self.config.shuffler() if self.config.shuffler else seeded(None)

    def _recover(self) -> Shoe:
        """The shoe and any unfinished round, taken back from the store as ``pontoon play
        --db`` does (:func:`pontoon.store.session.recover`): resumed when it can be
        reconstructed, else void (16.5)."""
        rules = self.rules

        def make_shoe(state: str | None) -> Shoe:
            if state is None:
                return Shoe(rules, self._rng())
            shoe = restore(rules, state, None)
            if self.config.shuffler is not None:
                shoe.rng = self._rng()
            return shoe

        aside = set_aside(self.log, rules)  # a stored shoe of other rules: revealed, not dealt
        got = recover(self.log, rules, make_shoe)
        if aside is not None:
            prepared = self.log.prepare([(disclosed(aside), False)], shoe=got.shoe)
            self._written(prepared, self._moved(self.log.store.append(prepared.batch)))
            self.notes.append("the stored shoe belongs to other rules: it is revealed, not dealt")
        if got.resumed is not None:
            self.round, self.roundlog = got.resumed.round, got.resumed
            self.names |= got.resumed.players
            self.notes.append(f"round {got.resumed.number} resumed from the store (16.5)")
        self.timer.resumed(got.last_at if got.resumed is not None else None)
        for number in got.voided:
            self.notes.append(f"round {number} was interrupted: void (16.5)")
        return got.shoe

    def reload(self) -> None:
        """After a failed write: forget memory, take the table back from the store. The
        version moves on, and in a running server the timer is set for the table as it is
        now (the interrupted-round policy, should the round have waited too long)."""
        self.log.reload()
        self.round = None
        self.roundlog = None
        self.shoe = self._recover()
        self.version += 1
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # not serving: the server arms the timers when it starts
        self.arm_timer()

    # ------------------------------------------------------------------ players
    async def join(self, name: str, token: str) -> None:
        """A player sits down: the session (its token's digest) is stored and a new player's
        bankroll deposited (a ledger entry), in one transaction.
        :class:`~pontoon.store.db.NameTakenError` when a session has the name already."""
        items: list[tuple[Event, bool]] = []
        wallet = self.wallets is not None  # the wallet pays the wagers: no bankroll
        if not wallet and self.log.balance(name) == 0 and name not in self._in_round():
            deposit = Event("deposit", player=name, amount=self.config.bankroll, detail="buy-in")
            items.append((deposit, False))
        prepared = self.log.prepare(items)
        prepared.batch.session = (token_digest(token), name)
        self.log.applied(prepared, self._moved(await self.writer.append(prepared.batch)))
        self.names.add(name)
        self.seen[name] = time.monotonic()

    def check_leave(self, name: str) -> None:
        """:class:`Refused` while ``name`` has a wager in the round: it stands until settled."""
        if name in self._in_round():
            rnd = self.round
            assert rnd is not None
            boxes = sorted(b.number for b in rnd.boxes.values() if name in b.players)
            where = ", ".join(str(b) for b in boxes)
            raise Refused(
                f"{name} has a wager in play on box {where}: a wager stands until it is "
                "settled; leave when the round is over",
                "8.2",
            )

    async def leave(self, name: str) -> int:
        """``name`` leaves the table: the whole balance is cashed out (a withdrawal on the
        ledger) and the session deleted, in one transaction. Returns the amount paid out."""
        self.check_leave(name)
        amount = self.balance(name)
        prepared = self.log.prepare_leave(name)
        try:
            written = self._moved(await self.writer.append(prepared.batch))
        except PontoonError as exc:
            raise Refused(f"not recorded: {exc}", code="error") from None
        self.log.applied(prepared, written)
        self.seen.pop(name, None)
        self.view.forget_player(name)
        self.names.discard(name)
        self.bump()
        return amount

    def bump(self) -> None:
        """A change that is nobody's decision (a player joins or leaves): the version moves on
        and the running timer keeps its deadline (it acts only on the version it was set for)."""
        self.version += 1
        self.timer.keep()

    def idle(self) -> list[str]:
        """The players whose session has not been connected for ``session_seconds`` and
        who have no wager in play: their sessions expire."""
        limit = time.monotonic() - self.config.session_seconds
        connected = {c.session.name for c in self.clients if c.session.role == "player"}
        busy = connected | self._in_round()
        return sorted(n for n in self.names if n not in busy and self.seen.get(n, 0) <= limit)

    def disconnected(self, client: Client) -> None:
        self.clients.discard(client)
        if client.session.role == "player" and not client.session.closed:
            self.seen[client.session.name] = time.monotonic()

    def _in_round(self) -> set[str]:
        rnd = self.round
        if rnd is None or rnd.over:
            return set()
        return {p for b in rnd.boxes.values() for p in b.players}

    def balance(self, name: str) -> int:
        """What ``name`` may stake: the money at the table, and the wallet behind it."""
        at_table = self.log.balance(name)
        return at_table + self.wallets.get(name, 0) if self.wallets is not None else at_table

    # ------------------------------------------------------------------ acting
    def mark(self) -> Mark:
        """Where the table is, to come back to with :meth:`rewind`."""
        rnd = self.round
        in_play = rnd is not None and not rnd.over
        point = rnd.checkpoint() if rnd is not None else None
        shoe = None if in_play else self.shoe.checkpoint()
        return rnd, self.roundlog, point, shoe, self.last_result

    def rewind(self, mark: Mark) -> None:
        """Undo what was applied since ``mark`` and not recorded (a wallet refused it, or
        its money is still to be asked for): the round and its cards as they were, every
        other player's recorded wager standing. The table is as it was last told (nothing
        is told between an apply and its write): its version stays, its texts are made
        again."""
        rnd, rl, point, shoe, last = mark
        if self.round is not rnd:  # the refused wager opened a round: it never was
            self.round, self.roundlog = rnd, rl
            if shoe is not None:  # nor the shuffle it opened with
                self.shoe.rollback(shoe)
        elif rnd is not None and point is not None:
            rnd.rewind(point)
        self.last_result = last
        self.view.forget()

    def _money_check(self, name: str, need: int) -> None:
        have = self.balance(name)
        if need > have:
            raise Refused(f"{name} has {have} at the table, too little for {need}", code="funds")

    def _wagered(self, session: Session, msg: Bet) -> Round:
        """The round ``msg`` goes into (a new one, not yet the table's, when none is taking
        bets), :class:`Refused` when the wager may not be made."""
        if session.role != "player":
            raise Refused("only a player wagers", code="role")
        rnd = self.round
        if rnd is not None and not rnd.over and rnd.phase is not Phase.BETTING:
            raise Refused("no bets after 'No more bets': wait for the next round", "8.2")
        if rnd is None or rnd.over:
            if self.closed:
                raise Refused("the table is closed: the pit boss closed it", code="closed")
            rnd = Round(self.rules, self.shoe)
        self._check_wager(rnd, session.name, msg)
        return rnd

    def bet(self, session: Session, msg: Bet) -> None:
        rnd = self._wagered(session, msg)
        if rnd is not self.round:
            rnd.ready_shoe()  # a shuffle now: its commitment is recorded before the wagers
            self.round = rnd
            self.roundlog = self.log.start(rnd)
            self.last_result = {}
        rnd.place_wager(msg.box, session.name, msg.amount)

    def short(self, session: Session, msg: Bet) -> list[tuple[str, int]]:
        """With an operator's wallet: what is to be asked of it before ``msg`` is applied
        (what the player lacks at the table), refused as :meth:`bet` refuses — so that a
        wager is paid for first, not applied, taken back and applied again (:class:`Needs`).

        Nothing changes: a new round made to check the wager against is let go."""
        listener = self.shoe.listener
        try:
            self._wagered(session, msg)
        finally:
            self.shoe.listener = listener
        lacks = msg.amount - self.log.balance(session.name)
        return [(session.name, lacks)] if lacks > 0 else []

    def set_limits(self, table_min: int, table_max: int) -> None:
        """The pit boss's new limits (15.6, 15.2) for the rounds to come (a round in play
        keeps its own rule set)."""
        self.rules = rules = with_limits(self.rules, table_min, table_max)
        self.public_rules = public_rules(rules)

    def _check_wager(self, rnd: Round, name: str, msg: Bet) -> None:
        try:
            rnd.check_wager(msg.box, name, msg.amount)
        except IllegalAction as exc:
            raise Refused(str(exc), exc.rule) from None
        self._money_check(name, msg.amount)

    def deal(self, session: Session | None) -> None:
        rnd = self.round
        if rnd is None or rnd.over or rnd.phase is not Phase.BETTING:
            raise Refused("there is no round waiting to be dealt", "8.2")
        if session is not None and session.role not in ("player", "dealer", "supervisor"):
            raise Refused("the dealer, the supervisor or a player calls for the deal", code="role")
        if (
            session is not None
            and session.role == "player"
            and session.name not in {p for b in rnd.boxes.values() for p in b.players}
        ):
            raise Refused("only a player with a wager calls for the deal", "8.2", code="role")
        rnd.deal()

    def act(self, session: Session, msg: Act) -> None:
        if session.role != "player":
            raise Refused("a supervisor applies procedures; players decide", code="role")
        rnd = self.round
        if rnd is None or rnd.over:
            raise Refused("there is no round in play", "8.2")
        me = session.name
        box = rnd.boxes.get(msg.box)
        if box is None:
            raise Refused(f"box {msg.box} holds no wager", "8.2")
        if me not in box.players:
            raise Refused(f"{me} has no wager on box {msg.box}", "15.3", code="seat")
        player = None if (box.seated == me and msg.action not in INSURANCE_ACTIONS) else me
        move = Move(action_of(msg.action), msg.box, msg.hand, player, msg.amount, msg.follow)
        try:
            rnd.check(move)
        except IllegalAction as exc:
            raise Refused(str(exc), exc.rule) from None
        self._money_check(me, rnd.stake_of(move))
        rnd.apply(move)

    def procedure(self, session: Session, msg: Procedure) -> None:
        if session.role != "supervisor":
            raise Refused("only the supervisor applies section 16 procedures", "16", code="role")
        rnd = self.round
        if rnd is None or rnd.over:
            raise Refused("there is no round in play", "16")
        op = Irregularity(msg.kind, "supervisor", msg.box, msg.hand, msg.player, msg.card)
        try:
            rnd.apply_irregularity(op)
        except IllegalAction as exc:
            raise Refused(str(exc), exc.rule) from None

    # ------------------------------------------------------------------ commit and tell
    async def commit(
        self,
        ack: tuple[str, str] | None = None,
        staff: tuple[str, str, str] | None = None,
        paid: Paid | None = None,
    ) -> None:
        """Write what happened (write-ahead), then the table's version moves on. ``ack``:
        (token digest, message id) of the message that did it, kept with the write, so that
        after a restart the same message is known as applied. ``staff``: (account, role,
        action) when a member of staff did it, recorded with it. With wallets, a round that
        ends gives back what it leaves each player (in the same write). With an operator's
        wallet, the money a wager needs beyond the player's at the table must have been
        ``paid`` (:meth:`paying`), else :class:`Needs` and nothing is written."""
        rl = self.roundlog
        if rl is not None and rl.pending:
            try:
                ended = self.wallets is not None and rl.round.over
                prepared = rl.prepare(self.shoe, cash_out=ended)
                assert prepared is not None
                prepared.batch.ack = ack
                prepared.batch.staff = staff
                match_debits(prepared.batch, paid or [], self.remote)
                written = self._moved(await self.writer.append(prepared.batch))
                rl.applied(prepared, written)
                self._note_revealed(prepared, written)
            except WalletError:
                raise  # nothing was written: the caller rewinds what it applied
            except (LedgerError, PontoonError, OSError):
                self.reload()  # the version moves on
                raise
            self.timer.moved_on()  # the round moved on
            if rl.round.over:
                self.last_result = dict(rl.round.balance)
        if self.closed:  # the round that was in play has ended: the shoe is revealed
            try:
                await self.reveal_shoe()
            except (PontoonError, OSError) as exc:  # (what was done above stands)
                self.notes.append(f"the shoe could not be revealed yet: {exc}")
        self.version += 1
        self.view.mark_changes()
        self.arm_timer()

    # ------------------------------------------------------------------ the shoe revealed
    def _note_revealed(self, prepared: Prepared, written: Written) -> None:
        """Note the shoes a write revealed (its ``disclose`` events), for the states."""
        batch = prepared.batch
        for i, (e, in_round) in enumerate(batch.events):
            if e.kind == "disclose":
                rid = written.round_id if in_round else None
                self.revealed.append(Revealed.of(e, batch.prev_seq + 1 + i, rid))
        del self.revealed[:-REVEALED_SHOWN]

    def _written(self, prepared: Prepared, written: Written) -> None:
        self.log.applied(prepared, written)
        self._note_revealed(prepared, written)

    def _reveal(self) -> tuple[Prepared, object] | None:
        """The write that reveals the shoe of a closed table between rounds (a ``disclose``
        event outside any round, with the shoe: revealed, it is shuffled (7) before it deals
        again) and the shoe's mark from before it; None when there is nothing to reveal."""
        if not self.closed or (self.round is not None and not self.round.over):
            return None
        if self.shoe.commitment is None:  # (none open: revealed already, or never shuffled)
            return None
        mark = self.shoe.checkpoint()
        text = self.shoe.reveal()
        assert text is not None
        batch = [(disclosed(text, self.closed_by), False)]
        return self.log.prepare(batch, shoe=self.shoe), mark

    async def reveal_shoe(self) -> None:
        """The pit boss closed the table: once no round is in play, its shoe is revealed
        (recorded before anybody is told). A refused write takes the table back from the
        store (the shoe as it was: revealed at the next commit)."""
        made = self._reveal()
        if made is None:
            return
        prepared, mark = made
        try:
            self._written(prepared, self._moved(await self.writer.append(prepared.batch)))
        except (PontoonError, OSError):
            self.shoe.rollback(mark)
            self.reload()
            raise

    def reveal_closed(self) -> None:
        """At start: a table that stays closed reveals a shoe it has not revealed yet (its
        close was recorded, the reveal not)."""
        made = self._reveal()
        if made is not None:
            prepared = made[0]
            self._written(prepared, self._moved(self.log.store.append(prepared.batch)))

    # ------------------------------------------------------------------ the timer
    def arm_timer(self) -> None:
        """Set the table's timer for the table as it is now (:meth:`TableTimer.arm`)."""
        self.timer.arm()

    @property
    def deadline(self) -> float | None:
        """When (``time.monotonic()``) the wait the timer measures ends; None: no wait."""
        return self.timer.deadline

    async def expire(self, version: int) -> None:
        """The timer set for ``version`` ran out: what it does (:meth:`TableTimer.timeout`)
        applied under the lock, if the table is still at that version, committed and told;
        a write the wallet refuses is noted, and the timer set again."""
        await self.timer.ready_chart()

        async def step(paid: Paid) -> None:
            nonlocal version
            if version != self.version:
                return
            mark = self.mark()
            try:
                self.timer.timeout()
            except PontoonError as exc:
                self.notes.append(f"timer: {exc}")
            try:
                await self.commit(paid=paid)
            except (Needs, WalletError):  # (the policy's double, say): nothing was written
                self.rewind(mark)
                version = self.version
                raise
            self.broadcast()

        try:
            await self.paying(step)
        except (WalletError, Refused) as exc:  # the wallet said no: the timer tries again
            async with self.lock:
                self.notes.append(f"timer: not recorded: {exc}")
                self.arm_timer()
                self.broadcast()

    # ------------------------------------------------------------------ what it tells
    def state(self, session: Session | None) -> dict[str, Any]:
        """The state document for ``session`` (:meth:`TableView.state`)."""
        return self.view.state(session)

    def state_text(self, session: Session | None, common: str | None = None) -> str:
        """:meth:`state` as JSON text (:meth:`TableView.state_text`)."""
        return self.view.state_text(session, common)

    def stale(self, session: Session, v: int) -> bool:
        """Whether a decision made on version ``v`` no longer fits what the sender sees."""
        return self.view.stale(session, v)

    def broadcast(self) -> None:
        """Queue the new state to every client (:meth:`TableView.broadcast`)."""
        self.view.broadcast()

    def close(self) -> None:
        if self.remote is not None:
            self.remote.let_go(self.name)
        self.timer.close()


# TableConfig, Session and with_limits are named here too: the tests and tools that make a
# table take them from this module
__all__ = ["Mark", "Session", "Table", "TableConfig", "with_limits"]
