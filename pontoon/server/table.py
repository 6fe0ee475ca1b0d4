"""One table of the server: its rule set and limits, its round, its players and its record.

Every change happens under the table's :attr:`Table.lock`, one at a time; it is committed to
the store (write-ahead) before anybody is told of it. A state document never holds an undealt
card, the shoe, a burnt card or the hole card. It holds the commitment to the shoe in play,
recorded before its first card left it, and the shoes revealed last (``fairness``,
docs/fairness.md): a round opens with the shuffle it needs (:meth:`Round.ready_shoe`), so the
new shoe's commitment is shown before the bets and the deal; the pit boss's close reveals the
shoe (a ``disclose`` event outside any round, once no round is in play), and the table shuffles
anew when it opens again.

One timer per table: the turn timer (16.6 and the defaults), the deal timer, and the
interrupted-round policy (knob ``interrupted``): a dealt round in which nothing has been
recorded for ``interrupted_minutes`` — its player gone, or the table back from a failure too
late — is voided or completed by the optimal chart (:meth:`Table.interrupt`, docs/server.md).

With an operator's wallet no lock is held across a call to the operator (:meth:`Table.paying`):
a message whose write needs a player's money from it is applied under the lock only to measure
the debit, taken back, and the lock let go while the debit is written ``pending`` and sent; the
lock is then taken again, the message applied anew and recorded with the debit (marked done in
that write). A debit no write records (refused, unanswered, the table moved on) is rolled back.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pontoon.analysis.chart import Chart
from pontoon.errors import IllegalAction, InputError, PontoonError
from pontoon.events import Event
from pontoon.hand import describe, total
from pontoon.irregularities import Irregularity
from pontoon.layout import Box, Move, Turn
from pontoon.round import Round
from pontoon.rules import RuleSet, rules_from_dict
from pontoon.shoe import Shoe, Shuffler, commitment_of, seeded
from pontoon.store.db import Batch, Store, WalletError, Written, token_digest
from pontoon.store.group import GroupWriter
from pontoon.store.recorder import LedgerError, Prepared, RoundLog, TableLog
from pontoon.store.revealed import Revealed, disclosed, recent, set_aside
from pontoon.store.session import recover
from pontoon.store.shoestate import restore
from pontoon.store.show import event_text
from pontoon.vocab import INSURANCE_ACTIONS, Action, Phase, Role, TurnKind, action_of
from pontoon.vocab import Procedure as Kind

from .errors import Refused
from .limits import Bucket
from .protocol import Act, Bet, Procedure, encode

R = TypeVar("R")
HIDDEN = ("hole", "burn")
REVEALED_SHOWN = 5  # the shoes revealed last that a state lists
PUBLIC_KNOBS = (
    "name",
    "deck",
    "decks",
    "boxes",
    "players_per_box",
    "boxes_per_player",
    "table_min",
    "table_max",
    "box_max",
    "natural_pays",
    "insurance",
    "surrender",
    "dealer_peeks",
    "split_max_hands",
    "interrupted",
    "interrupted_minutes",
)
# why the interrupted-round policy applies: the procedure recorded for it
ABANDONED, FAILURE = "abandoned", "failure"
_PROCEDURE_OF = {ABANDONED: Kind.ABANDONED, FAILURE: Kind.FAILURE}


@dataclass
class TableConfig:
    """A table: its name, rule set (with its limits) and timers. ``shuffler`` is for tests (a
    seeded or stacked shoe); real tables shuffle with ``secrets.SystemRandom``."""

    name: str
    rules: RuleSet
    turn_seconds: float = 30.0  # a decision not made by then: 16.6 (or the 15.3 default)
    deal_seconds: float = 30.0  # after the first wager the dealer calls "no more bets"
    bankroll: int = 100_000  # what a new player brings to the table, in cents
    shuffler: Callable[[], Shuffler] | None = None
    session_seconds: float = 24 * 3600.0  # a session not connected for so long is closed
    # the wall clock the interrupted-round policy counts by (seconds since the epoch, as the
    # store's event times): injected by tests, which move it on instead of waiting minutes
    clock: Callable[[], float] = time.time
    # the optimal chart the policy ``complete`` plays (None: worked out from the rules, once)
    chart: Callable[[RuleSet], Chart] | None = None


def public_rules(rules: RuleSet) -> dict[str, Any]:
    """The knobs a table shows its players."""
    return {k: v for k, v in rules.to_dict().items() if k in PUBLIC_KNOBS}


def with_limits(rules: RuleSet, table_min: int, table_max: int) -> RuleSet:
    """``rules`` with the pit boss's limits (15.6, 15.2); :class:`Refused` when the rule set
    refuses them (the minimum above the maximum, …)."""
    values = rules.to_dict() | {"table_min": table_min, "table_max": table_max}
    try:
        return rules_from_dict(values)
    except InputError as exc:
        raise Refused(str(exc), "15.6", code="limits") from None


def optimal_chart(rules: RuleSet) -> Chart:
    """The optimal basic strategy chart of ``rules``, as the strategy hint reads it
    (:func:`pontoon.analysis.report.analyze`): seconds to a minute of work."""
    from pontoon.analysis.report import analyze

    report = analyze(rules, "basic")
    assert report.chart is not None
    return report.chart


@dataclass
class Session:
    token: str
    name: str
    role: str  # "player" or "supervisor"
    table: str
    seen: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    digest: str = ""  # the token's SHA-256, as the store keeps it (players only)
    closed: bool = False  # the player left (or the session expired): the token opens nothing
    address: str | None = None  # where it was made from (a session made before a restart: None)
    rate: Bucket | None = None  # its ``state`` requests (the limits)


class Client(Protocol):
    """A connected client. Nothing here waits for the network: each call only queues what is
    to be sent, and the client's own writer sends it (so the table's lock is never held
    while a socket is slow)."""

    session: Session

    def post_state(self, text: str) -> None:
        """Queue a state; a newer one replaces a state not sent yet."""

    def post(self, message: dict[str, Any]) -> None:
        """Queue a direct message (sent in order)."""

    def close(self, code: int, message: dict[str, Any] | None = None) -> None:
        """Queue ``message`` if any, then the closing of the socket with ``code``."""


Paid = list[tuple[str, str, int]]
"""Debits the operator acknowledged for a write not yet made: (key, player, amount) each."""


class RemoteWallet(Protocol):
    """An operator's wallet as a table uses it (:class:`pontoon.server.operator.OperatorWallet`)."""

    owner: str  # this process, as the calls it sends are marked in the store

    async def debit(self, table: str, wants: list[tuple[str, int]]) -> Paid:
        """Debit each ``(player, amount)`` before the write (no lock held while it waits)."""

    def settled(self, paid: Paid) -> None:
        """The write of these debits is over (recorded or not: then rolled back)."""

    def serve(self, table: str) -> None:
        """This process serves ``table`` now (its calls are this process's to end)."""

    def let_go(self, table: str) -> None:
        """This process no longer serves ``table``."""


class Needs(Exception):
    """A write needs money from the operator's wallet that no debit has paid for yet:
    ``wants``, (player, amount) each. Raised by :meth:`Table.commit` before anything is
    written; the caller rewinds what it applied, and :meth:`Table.paying` asks the wallet
    with the table's lock let go. A signal, as :class:`StopIteration` is, not an error:
    never a :class:`~pontoon.errors.PontoonError`, so that no handler of errors takes it."""

    def __init__(self, wants: list[tuple[str, int]]) -> None:
        super().__init__(f"the operator's wallet is asked for {wants}")
        self.wants = wants


PASSES = 3  # a message applied again after each debit its write then wants (the table moved on)


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


Mark = tuple[
    Round | None, RoundLog | None, tuple[int, object] | None, object | None, dict[str, int]
]
"""Where a table stood (:meth:`Table.mark`): its round, the round's log, the round's mark and,
between rounds, the shoe's (the next round may open with a shuffle)."""


class Table:
    """``wallets``: the players' built-in wallets (account -> balance, shared by the tables
    and kept current by every write): a wager beyond a player's money at the table is debited
    from the wallet in the transaction of its event, and what a round leaves a player goes
    back to the wallet when the round ends. None: play money, a bankroll at joining."""

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
        self._rules_text: tuple[dict[str, Any] | None, str] = (None, "")  # (its rules, JSON)
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
        self.deadline: float | None = None  # time.monotonic() when the wait ends
        self._timer: asyncio.TimerHandle | None = None
        self.notes: list[str] = []
        self.last_result: dict[str, int] = {}
        self.changed: dict[str, int] = {}  # player -> version of the last change for them
        self._seen_keys: dict[str, tuple[Any, ...]] = {}
        self._cache: tuple[int, dict[str, Any], list[Move]] | None = None
        self._text: tuple[int, str] | None = None  # the shared state as JSON (without "}")
        self._pub_round: Round | None = None  # the round whose events _pub holds
        self._pub: list[tuple[Event, dict[str, Any], str]] = []  # its events: as sent, JSON
        self._tasks: set[asyncio.Task[None]] = set()
        # The interrupted-round policy: when (config.clock) the round in play last had an event
        # recorded, and whether it came back from the store later than interrupted_minutes
        self.since: float | None = None
        self.late = False
        self._chart: Chart | None = None  # the chart ``complete`` plays, once worked out
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

    def _paid(self, batch: Batch, paid: Paid) -> None:
        """With an operator's wallet: the batch's wallet deposits matched to the debits
        ``paid`` for them (their keys, by seq, go with the write and are marked done in it);
        :class:`Needs` when they are not exactly what was paid (none paid yet, or the table
        moved on while the operator answered)."""
        if self.remote is None:
            return
        wants = [
            (batch.prev_seq + 1 + i, str(e.player), int(e.amount or 0))
            for i, (e, _) in enumerate(batch.events)
            if e.kind == "deposit"
        ]
        if [(p, a) for _, p, a in wants] != [(p, a) for _, p, a in paid]:
            raise Needs([(p, a) for _, p, a in wants])
        batch.remote = {seq: key for (seq, _, _), (key, _, _) in zip(wants, paid, strict=True)}
        batch.remote_owner = self.remote.owner  # (its credits are this process's to send)

    async def paying(self, step: Callable[[Paid], Awaitable[R]]) -> R:
        """``step(paid)`` under the table's lock. When its write needs the operator's money
        (:class:`Needs`: ``step`` rewound what it applied), the lock is let go while the
        wallet is asked (:class:`~pontoon.store.db.WalletError` when it refuses or does not
        answer: at most ``OperatorConfig.longest``), then ``step`` runs again with the debits.
        No lock is held across a call to the operator; a debit no write recorded is rolled
        back by the wallet's outbox. :class:`Refused` (``stale``) after :data:`PASSES`."""
        paid: Paid = []
        asked = False
        try:
            for _ in range(PASSES):
                try:
                    async with self.lock:
                        return await step(paid)
                except Needs as need:
                    assert self.remote is not None
                    self.remote.settled(paid)  # (not recorded: rolled back)
                    paid = []
                    if not asked:  # the table is not idle: it stays with this process
                        asked = True
                        self.asking += 1
                    paid = await self.remote.debit(self.name, need.wants)
            raise Refused(
                "the table moved on while the operator's wallet answered: look again",
                code="stale",
            )
        finally:
            if asked:
                self.asking -= 1
            if self.remote is not None:
                self.remote.settled(paid)

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
        self.since, self.late = None, False
        if got.resumed is not None:
            self.round, self.roundlog = got.resumed.round, got.resumed
            self.names |= got.resumed.players
            self.notes.append(f"round {got.resumed.number} resumed from the store (16.5)")
            self.since = got.last_at
            due = self.interrupted_at()
            self.late = due is not None and self.config.clock() >= due  # policy: at once
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
        for d in (self.seen, self.changed, self._seen_keys):
            d.pop(name, None)
        self.names.discard(name)
        self.bump()
        return amount

    def bump(self) -> None:
        """A change that is nobody's decision (a player joins or leaves): the version moves on
        and the running timer keeps its deadline (it acts only on the version it was set for)."""
        self.version += 1
        if self._timer is not None and self.deadline is not None:
            self._timer.cancel()
            delay = max(0.0, self.deadline - time.monotonic())
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(delay, self._fire, self.version)

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

    # ------------------------------------------------------------------ the state
    def awaiting(self) -> dict[str, Any] | None:
        """Whose decision the table waits for (:meth:`pontoon.round.Round.to_act`)."""
        rnd = self.round
        turn = rnd.to_act() if rnd is not None else None
        return turn.to_dict() if turn is not None else None

    def mine(self, legal: list[Move], name: str) -> list[Move]:
        """The moves of ``legal`` that are ``name``'s to make."""
        rnd = self.round
        return [m for m in legal if rnd.player_of(m) == name] if rnd is not None else []

    def _box_doc(self, box: Box) -> dict[str, Any]:
        hands = []
        for i, h in enumerate(box.hands):
            hands.append(
                {
                    "hand": i,
                    "cards": card_list(h.cards),
                    "total": h.total if h.cards else 0,
                    "text": describe(h.cards, from_split=h.from_split, natural=self.natural)
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

    def _shared(self) -> tuple[dict[str, Any], list[Move]]:
        """What every client of this version is sent, and the legal moves (made once)."""
        cached = self._cache
        if cached is not None and cached[0] == self.version:
            return cached[1], cached[2]
        rnd = self.round
        legal = rnd.legal_moves() if rnd is not None and not rnd.over else []
        doc: dict[str, Any] = {
            "type": "state",
            "table": self.name,
            "version": self.version,
            "rules": self.public_rules,
            "round": self.roundlog.number if self.roundlog else self.log.last_number + 1,
            "phase": "idle" if rnd is None else ("over" if rnd.over else rnd.phase),
            "boxes": [],
            "dealer": {"cards": [], "total": 0, "text": "", "hole": False},
            "awaiting": self.awaiting(),
            "events": [],
            "notes": self.notes[-5:],
            "result": dict(self.last_result),
            "fairness": {
                "commitment": self.shoe.commitment,  # the shoe in play (docs/fairness.md)
                "revealed": [r.to_dict() for r in self.revealed],
            },
        }
        if rnd is not None:
            order = rnd.order if rnd.order else [rnd.boxes[n] for n in sorted(rnd.boxes)]
            doc["boxes"] = [self._box_doc(b) for b in order]
            doc["dealer"] = {
                "cards": card_list(rnd.dealer),
                "total": total(rnd.dealer) if rnd.dealer else 0,
                "text": describe(rnd.dealer, natural=self.natural) if rnd.dealer else "",
                "hole": rnd.hole is not None,  # a face-down card is there; never which
            }
            doc["events"] = self._public_events(rnd)
        self._cache = (self.version, doc, legal)
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
        return [p[1] for p in pub[-40:]]

    def _shared_text(self) -> str:
        """The shared state as JSON without its closing brace; the events' JSON comes from
        :meth:`_public_events`, the rules' is made once (until the rules change)."""
        doc = self._shared()[0]
        head = encode({k: v for k, v in doc.items() if k not in ("events", "rules")})
        if self._rules_text[0] is not self.public_rules:  # set again when the limits change
            rules = encode(self.public_rules)
            self._rules_text = (self.public_rules, rules)
        texts = [p[2] for p in self._pub[-40:]] if doc["events"] else []
        return f'{head[:-1]},"rules":{self._rules_text[1]},"events":[{",".join(texts)}]'

    def state(self, session: Session | None) -> dict[str, Any]:
        """The state document for ``session``: the table as all see it, with the recipient's
        own legal moves."""
        doc = dict(self._shared()[0])
        doc |= self._common()
        doc |= self._personal(session)
        return doc

    def state_text(self, session: Session | None, common: str | None = None) -> str:
        """:meth:`state` as JSON text. The part every client shares is encoded once per
        version (and ``common``, the balances and clock, once per broadcast); only the
        recipient's own part is encoded for each client."""
        cached = self._text
        if cached is None or cached[0] != self.version:
            cached = (self.version, self._shared_text())
            self._text = cached
        if common is None:
            common = self._common_text()
        mine = encode(self._personal(session))
        return f"{cached[1]},{common},{mine[1:]}"

    def _common(self) -> dict[str, Any]:
        deadline = None
        if self.deadline is not None:
            deadline = max(0, int((self.deadline - time.monotonic()) * 1000))
        connected = {c.session.name for c in self.clients}
        players = {n: {"connected": n in connected} for n in sorted(self.names)}
        return {"deadline_ms": deadline, "players": players}

    def _common_text(self) -> str:
        return encode(self._common())[1:-1]

    def _personal(self, session: Session | None) -> dict[str, Any]:
        rnd = self.round
        me = session.name if session is not None and session.role == "player" else None
        legal: list[dict[str, Any]] = []
        if me is not None and rnd is not None:
            legal = [
                {"action": m.action, "box": m.box, "hand": m.hand, "follow": m.follow}
                for m in self.mine(self._shared()[1], me)
            ]
        out: dict[str, Any] = {
            "you": session.name if session else None,
            "role": session.role if session else "watcher",
            "legal": legal,
            "balance": self.balance(me) if me is not None else None,  # yours alone
        }
        if session is not None and session.role == Role.SUPERVISOR:
            out["balances"] = {n: self.balance(n) for n in sorted(self.names)}
        return out

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
        self._cache = self._text = None

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

    def timeout(self) -> None:
        """The timer ran out. A round the interrupted-round policy is due for is voided or
        completed (:meth:`interrupt`). Else the dealer calls no more bets, undecided players
        behind take the default (15.3), and an absent seated player is dealt to 12 (16.6) —
        unless, under the policy ``void`` or ``complete``, the seated player has no socket
        connected: the round then waits for them until the policy is due."""
        rnd = self.round
        if rnd is None or rnd.over:
            return
        turn = rnd.to_act()
        if turn is None:
            return
        reason = self.interruption()
        if reason is not None:
            self.interrupt(reason)
        elif turn.kind is TurnKind.BETTING:
            rnd.deal()
        elif self.abandoned(turn):
            return  # gone, not slow: the policy decides, at interrupted_minutes
        elif turn.kind is TurnKind.DECIDE:
            rnd.apply_irregularity(Irregularity(Kind.ABSENT, by=Role.SUPERVISOR))
        else:  # insurance, players behind, 15.5 choices
            rnd.apply_defaults()

    # ------------------------------------------------------------------ interrupted rounds
    def interrupted_at(self) -> float | None:
        """When (``config.clock``) the interrupted-round policy applies to the round in play:
        ``interrupted_minutes`` after its last recorded event; None under ``resume``, or with
        no dealt round in play."""
        rnd = self.round
        if self.rules.interrupted == "resume" or rnd is None or self.since is None:
            return None
        if rnd.phase is Phase.BETTING or rnd.over:
            return None
        return self.since + 60.0 * self.rules.interrupted_minutes

    def interruption(self) -> str | None:
        """Why the policy applies now (``failure``: the table came back from the store later
        than ``interrupted_minutes`` after the round's last event; ``abandoned``: a decision
        was awaited that long), or None when it does not (yet)."""
        due = self.interrupted_at()
        if due is None or self.config.clock() < due:
            return None
        return FAILURE if self.late else ABANDONED

    def abandoned(self, turn: Turn) -> bool:
        """Under the policy ``void`` or ``complete``: the round awaits the decision of seated
        players (8.3, 15.5) of whom none has a socket connected."""
        if self.rules.interrupted == "resume":
            return False
        if turn.kind is not TurnKind.DECIDE and turn.kind is not TurnKind.CHOOSE:
            return False
        connected = {c.session.name for c in self.clients if c.session.role == "player"}
        return not connected & set(turn.players)

    def chart(self) -> Chart:
        """The optimal chart of the table's rules (``config.chart``, else
        :func:`optimal_chart`), worked out once."""
        if self._chart is None:
            self._chart = (self.config.chart or optimal_chart)(self.rules)
        return self._chart

    def interrupt(self, reason: str) -> None:
        """Apply the interrupted-round policy to the round in play, recorded with ``reason``
        (an ``interrupted-abandoned`` or ``interrupted-failure`` procedure by the ``policy``):
        ``void`` voids the whole round, every wager returned (16.5); ``complete`` declines
        every insurance still open and plays the round out as the simulator plays a chart
        (:func:`pontoon.sim.reference.play_out`: the optimal chart for every seated player,
        players behind and 15.5 choices their defaults), each move recorded ``by: policy``;
        the dealer then completes the round and it settles as any other."""
        from pontoon.sim.reference import play_out

        rnd = self.round
        assert rnd is not None
        chart = self.chart() if self.rules.interrupted == "complete" else None
        if rnd.decided_by != Role.POLICY:  # (a completion cut short goes on as it began)
            rnd.apply_irregularity(Irregularity(_PROCEDURE_OF[reason], by=Role.POLICY))
        if chart is not None:
            while not rnd.over:
                no = [m for m in rnd.legal_moves() if m.action is Action.NO_INSURANCE]
                if not no:
                    break
                rnd.apply(no[0])  # 10: insurance declined
            if not rnd.over:
                play_out(rnd, chart)
        number = self.roundlog.number if self.roundlog is not None else 0
        done = "void (16.5)" if chart is None else "completed by the optimal chart"
        self.notes.append(f"round {number} was interrupted ({reason}): {done}")

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
                self._paid(prepared.batch, paid or [])
                written = self._moved(await self.writer.append(prepared.batch))
                rl.applied(prepared, written)
                self._note_revealed(prepared, written)
            except WalletError:
                raise  # nothing was written: the caller rewinds what it applied
            except (LedgerError, PontoonError, OSError):
                self.reload()  # the version moves on
                raise
            self.since, self.late = self.config.clock(), False  # the round moved on
            if rl.round.over:
                self.last_result = dict(rl.round.balance)
        if self.closed:  # the round that was in play has ended: the shoe is revealed
            try:
                await self.reveal_shoe()
            except (PontoonError, OSError) as exc:  # (what was done above stands)
                self.notes.append(f"the shoe could not be revealed yet: {exc}")
        self.version += 1
        self._mark_changes()
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

    def _mark_changes(self) -> None:
        """Note, for each player, the version at which what the player may do (or the cards
        of the player's boxes) last changed: a click made before it is stale."""
        rnd = self.round
        legal = self._shared()[1]
        for name in self.names:
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
                self.changed[name] = self.version

    def stale(self, session: Session, v: int) -> bool:
        """Whether a decision made on version ``v`` no longer fits what the sender sees."""
        if session.role != "player":
            return v != self.version
        return v < self.changed.get(session.name, 0)

    def arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiting = self._shared()[0]["awaiting"]
        if waiting is None:
            self.deadline = None
            return
        seconds = (
            self.config.deal_seconds if waiting["kind"] == "betting" else self.config.turn_seconds
        )
        due = self.interrupted_at()
        if due is not None:  # the interrupted-round policy, should it come first
            seconds = max(0.0, min(seconds, due - self.config.clock()))
        self.deadline = time.monotonic() + seconds
        version = self.version
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(seconds, self._fire, version)

    def _fire(self, version: int) -> None:
        task = asyncio.get_running_loop().create_task(self._expire(version))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _expire(self, version: int) -> None:
        if self._chart is None and self.rules.interrupted == "complete" and self.interruption():
            # a cold chart takes seconds: worked out on a thread, the table's lock not held
            self._chart = await asyncio.to_thread(self.config.chart or optimal_chart, self.rules)

        async def step(paid: Paid) -> None:
            nonlocal version
            if version != self.version:
                return
            mark = self.mark()
            try:
                self.timeout()
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

    def broadcast(self) -> None:
        """Queue the new state to every client: nothing is sent (nor awaited) here, so a
        socket that does not read holds up nobody (each client's writer sends, and a client
        that falls behind is disconnected)."""
        common = self._common_text()
        for client in list(self.clients):
            client.post_state(self.state_text(client.session, common))

    def close(self) -> None:
        if self.remote is not None:
            self.remote.let_go(self.name)
        if self._timer is not None:
            self._timer.cancel()
