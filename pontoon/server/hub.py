"""The server's tables and sessions (:class:`Hub`): who may act at which table, and every
message applied under the table's lock, committed, then broadcast, or refused with nothing
changed. The HTTP and WebSocket routes that call it are :mod:`pontoon.server.routes`'.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from contextlib import suppress
from dataclasses import replace
from typing import Any

from pontoon.errors import PontoonError
from pontoon.store.accounts import STAFF, Account, Accounts
from pontoon.store.db import NameTakenError, Store, WalletError, token_digest
from pontoon.store.group import GroupWriter
from pontoon.store.roles import look
from pontoon.store.table_settings import settings

from .accounts import Door
from .charts import Charts
from .clients import Client, Session
from .errors import BadMessage, Conflict, NotFound, Refused, Throttled, TryLater, error_reply
from .limits import Bucket, Limits
from .logs import about, done
from .operator import Declined, OperatorConfig, OperatorWallet, Unavailable
from .protocol import Act, Bet, Deal, Leave, Message, Procedure, Reality, parse
from .table import Table
from .table_config import TableConfig, with_limits
from .table_wallet import Needs, Paid
from .tenure import CLOSE_MOVED, Leasing, Tenure
from .throttles import SharedThrottle
from .timing import Timings

SEEN = 64  # idempotency keys remembered per session
UNKNOWN = "unknown session token for this table"
THROTTLED = "too many failed authentications from this address: try again later"
MOVING = "table {} is moving to another server: try again in a moment"
CLOSE_REPLACED = 4409  # a socket closed because its session opened one too many
CLOSE_REVOKED = 4401  # a socket closed because its account's sessions were ended
REVOKED = "{}'s sessions were ended (logged out, paused, disabled or changed): log in again"

# the logger name operators' logging configurations know (the hub was app.py's once)
log = logging.getLogger("pontoon.server.app")


class Hub:
    """The tables this process serves and the sessions at them: who may act at which table, and
    every message a client sends applied (:meth:`handle`). With ``accounts`` (accounts mode) people
    log in, staff by their roles, and each player's built-in wallet stands behind every table
    (``wallets``, kept current by every write); there is no supervisor's token. Without, a name is
    enough to sit down with play money, and the supervisor's token opens the procedures."""

    def __init__(
        self,
        store: Store,
        configs: list[TableConfig],
        supervisor_token: str | None,
        limits: Limits | None = None,
        accounts: Accounts | None = None,
        operator: OperatorConfig | None = None,
        leasing: Leasing | None = None,
        writer_process: bool = False,
    ) -> None:
        self.store = store
        self.writer = GroupWriter(store, process=writer_process)
        self.applying = Timings()  # the messages that would change a table, each handled
        self.answered = {"ok": 0, "refused": 0}  # those messages, by answer (the metrics')
        self.accounts = accounts
        self.wallets: dict[str, int] | None = {} if accounts is not None else None
        self.remote = None
        if operator is not None:
            assert self.wallets is not None, "an operator's wallet needs accounts"
            self.remote = OperatorWallet(store, operator, self.wallets, leasing is not None)
        self.configs = {c.name: c for c in configs}
        self.tables: dict[str, Table] = {}  # the tables this process serves
        self.sessions: dict[str, Session] = {}  # by the token's digest
        self.supervisors: dict[str, Session] = {}  # the supervisor's session at each table
        self.staff: dict[tuple[str, str], Session] = {}  # (table, account): staff at a table
        self.supervisor_token = None if accounts is not None else supervisor_token
        self.door: Door | None = None  # accounts mode: the players' reality checks
        self.limits = limits = limits or Limits()
        self.charts = Charts()
        self.throttle = SharedThrottle(store, "address", limits.failures, limits.failure_window)
        # an account's sockets, at the tables of this process: the bound shared out among the
        # processes, so that together they allow it (rounded up: at most N - 1 more)
        shared = max(1, leasing.processes) if leasing is not None else 1
        self.sockets_per_account = -(-limits.sockets_per_account // shared)
        self.tenure: Tenure | None = None  # several processes: the tables held by lease
        if leasing is None:
            for name in self.configs:
                self.open_table(name)
        else:
            names = list(self.configs)
            self.tenure = Tenure(store, leasing, names, self.open_table, self.drop, self.idle)
            self.tenure.start()

    def idle(self, name: str) -> bool:
        """Table ``name`` is between rounds, nothing being applied: it may change hands."""
        t = self.tables.get(name)
        if t is None or t.lock.locked() or t.asking:  # (a debit awaited: its wager to come)
            return False
        return t.round is None or t.round.over

    def open_table(self, name: str, fence: int | None = None) -> None:
        """Serve table ``name`` (its writes carry ``fence``, the lease's token, when leased),
        its round in play resumed from the store. What the pit boss set outlives a restart:
        the limits go into the rule set before the round in play is resumed under them."""
        c, found = self.configs[name], settings(self.store, name)
        if found.limits is not None:
            c = replace(c, rules=with_limits(c.rules, *found.limits))
        t = Table(c, self.store, self.writer, self.wallets, self.remote, fence)
        t.closed = found.closed
        t.reveal_closed()  # a close recorded before its shoe was revealed
        self.tables[name] = t
        t.arm_timer()  # a resumed round's turn timer

    def drop(self, name: str) -> None:
        """Stop serving table ``name`` (its lease is another process's now): its sockets are
        closed (4503: connect again) and its sessions forgotten here (the store keeps them)."""
        t = self.tables.pop(name, None)
        if t is None:
            return
        moved = error_reply(Refused(MOVING.format(name), code="moved"))
        for client in list(t.clients):
            client.close(CLOSE_MOVED, moved)
        t.close()
        self.sessions = {k: v for k, v in self.sessions.items() if v.table != name}
        self.supervisors.pop(name, None)
        self.staff = {k: v for k, v in self.staff.items() if k[0] != name}

    def session(self, table: str, token: str | None, addr: str | None = None) -> Session:
        """The session of ``token`` at ``table``: from memory, else from the store (a session
        made before a restart); :class:`Refused` for a missing, unknown or other table's.
        An unknown token is a failed authentication of ``addr``: logged (never the token) and
        counted; an address with too many is refused (code ``throttled``) whatever it sends."""
        if not token:
            raise Refused("a session token is required: join the table first", code="auth")
        if addr is not None and self.throttle.blocked(addr):
            raise Refused(THROTTLED, code="throttled")
        try:
            return self._session(table, token)
        except Refused:
            if addr is not None:
                blocked = self.throttle.fail(addr)
                log.warning("failed authentication from %s at table %s", addr, table)
                if blocked:
                    log.warning(
                        "%s refused for %g s: %d failed authentications",
                        addr,
                        self.throttle.window,
                        self.throttle.limit,
                    )
            raise

    def _session(self, table: str, token: str) -> Session:
        # bytes: compare_digest refuses a str with other than ASCII characters (a TypeError)
        raw = token.encode("utf-8", "surrogatepass")
        sup_token = self.supervisor_token
        if sup_token is not None and secrets.compare_digest(
            raw, sup_token.encode("utf-8", "surrogatepass")
        ):
            # one session per table, whatever the number of sockets: "two clicks apply once"
            sup = self.supervisors.get(table)
            if sup is None:
                sup = self.supervisors[table] = Session(token, "supervisor", "supervisor", table)
            return sup
        s = None
        if len(token) <= 64 and token.isascii():  # a player's token is ASCII
            digest = token_digest(token)
            s = self.sessions.get(digest)
            if s is None:
                found = self.store.find_session(token)
                if found is not None and found.table in self.tables:
                    s = self._restored(found.table, found.player, digest, found.last_id, token)
        if s is None or s.table != table or s.closed:
            raise Refused(UNKNOWN, code="auth")
        return s

    def _restored(
        self, table: str, player: str, digest: str, last_id: str | None, token: str = ""
    ) -> Session:
        """A player's session made before a restart, taken back from the store."""
        s = Session(token, player, "player", table, digest=digest)
        if last_id is not None:  # applied just before the restart: not again
            version = self.tables[table].version
            s.seen[last_id] = {"type": "ok", "ref": last_id, "version": version}
        self.sessions[digest] = s
        return s

    def account_session(self, table: str, account: Account) -> Session:
        """The session at ``table`` of a logged-in ``account``: a member of staff's (made on
        first use, one per table), or the player's own made by joining (:class:`Refused`
        when the player has not joined the table)."""
        if account.role in STAFF:
            key = (table, account.name)
            s = self.staff.get(key)
            if s is None:
                s = self.staff[key] = Session("", account.name, str(account.role), table)
            return s
        for s in self.sessions.values():
            if s.table == table and s.name == account.name and not s.closed:
                return s
        found = self.store.session_of(table, account.name)
        if found is None:
            raise Refused(f"{account.name} has not joined table {table!r}", code="auth")
        if self.wallets is not None and self.remote is None:  # the built-in wallet's
            self.wallets[account.name] = account.balance
        return self._restored(table, account.name, found[0], found[1])

    def table(self, name: str) -> Table:
        """The table ``name`` this process serves: :class:`TryLater` when no process holds
        it at this moment, :class:`NotFound` when there is no such table."""
        t = self.tables.get(name)
        if t is None and name in self.configs:  # held by no process at this moment
            raise TryLater(MOVING.format(name))
        if t is None:
            raise NotFound(f"no table {name!r}")
        return t

    async def join(self, table: Table, name: str, addr: str | None = None) -> Session:
        """A new session at ``table`` for ``name`` made from ``addr`` (its lock held).
        :class:`Conflict` when a session has the name (one made before a restart counts, it
        is in the store) or one too like it (:func:`pontoon.store.roles.look`), or the table
        has its ``players_per_table``; :class:`Throttled` when ``addr`` has
        ``joins_per_address`` sessions open there."""
        taken = f"{name!r} is already at table {table.name!r}"
        if any(s.name == name and s.table == table.name for s in self.sessions.values()):
            raise Conflict(taken)
        like = [n for n in table.names if n != name and look(n) == look(name)]
        if like:
            raise Conflict(f"{name!r} is too like {like[0]!r}, at table {table.name!r}")
        limits = self.limits
        if len(table.names) >= limits.players_per_table:
            msg = f"table {table.name!r} is full: {limits.players_per_table} players"
            raise Conflict(msg)
        mine = [s for s in self.sessions.values() if s.table == table.name and s.address == addr]
        if addr is not None and len(mine) >= limits.joins_per_address:
            msg = f"at most {limits.joins_per_address} players from one address at a table"
            raise Throttled(msg)
        token = secrets.token_urlsafe(24)
        try:
            await table.join(name, token)
        except NameTakenError:
            raise Conflict(taken) from None
        digest = token_digest(token)
        s = Session(token, name, "player", table.name, digest=digest, address=addr)
        self.sessions[digest] = s
        return s

    def admit(self, table: Table, session: Session) -> None:
        """A new socket of ``session`` is coming: when the session has ``sockets_per_session``
        open at ``table`` already, its oldest is told and closed (4409; the page does not
        reconnect it): a reconnecting player is never locked out by a socket that lingers."""
        mine = [c for c in table.clients if c.session is session]
        self._bound(mine, self.limits.sockets_per_session, "this session")
        if self.accounts is not None and session.name:  # one account, every table
            everywhere = [
                c
                for t in self.tables.values()
                for c in t.clients
                if c.session.name == session.name and c.session.role == session.role
            ]
            self._bound(everywhere, self.sockets_per_account, "this account")

    def revoked(self, name: str) -> int:
        """Account ``name``'s sessions were ended (:mod:`pontoon.store.revocation`): its
        sockets here are told and closed, and its sessions here forgotten (its tokens open
        nothing now; a seat stays with its money). How many sockets were closed."""
        for digest, s in list(self.sessions.items()):
            if s.name == name:
                s.closed = True
                del self.sessions[digest]
        for key, s in list(self.staff.items()):
            if key[1] == name:
                s.closed = True
                del self.staff[key]
        text = {"type": "error", "code": "auth", "error": REVOKED.format(name)}
        closed = 0
        for t in self.tables.values():
            for client in list(t.clients):
                if client.session.name == name:  # ("supervisor", the token's, is reserved)
                    t.clients.discard(client)
                    client.close(CLOSE_REVOKED, text)
                    closed += 1
        return closed

    def _bound(self, mine: list[Client], n: int, who: str) -> None:
        """Close the oldest of ``mine`` until one more fits within ``n``."""
        while len(mine) >= n:
            oldest = min(mine, key=lambda c: getattr(c, "opened", 0))
            mine.remove(oldest)
            for t in self.tables.values():
                t.clients.discard(oldest)
            text = f"{who} opened more than {n} sockets: the oldest (this one) is closed"
            oldest.close(CLOSE_REPLACED, {"type": "error", "code": "sockets", "error": text})

    def state_wait(self, session: Session) -> float:
        """How long the answer to a ``state`` request of ``session`` waits: 0 within the
        limit (``state_burst`` at once, then ``states_per_second``, all its sockets
        together), else until the limit allows one (the waiting requests get one state)."""
        if session.rate is None:
            session.rate = Bucket(self.limits.states_per_second, self.limits.state_burst)
        return session.rate.take()

    async def leave(self, table: Table, name: str, sender: Client | None = None) -> int:
        """``name`` leaves ``table`` (its lock held): cashed out, every session of the name
        closed and each of their sockets but the ``sender``'s (answered by its handler) told
        (``left``) and closed at once; :class:`Refused` while the player has a wager in play."""
        amount = await table.leave(name)
        for digest, s in list(self.sessions.items()):
            if s.table == table.name and s.name == name and s.role == "player":
                s.closed = True
                del self.sessions[digest]
        left = {"type": "left", "player": name, "cashed_out": amount}
        for client in list(table.clients):
            if client.session.closed:
                table.clients.discard(client)
                if client is not sender:
                    client.close(1000, left)  # queued: its writer sends it, then closes
        return amount

    async def expire(self, table: Table) -> list[str]:
        """Close (cash out) the sessions of ``table`` that have been away for longer than
        its ``session_seconds`` and have no wager in play. Call with the lock not held."""
        if not table.idle():
            return []
        gone = []
        async with table.lock:
            for name in table.idle():
                try:
                    await self.leave(table, name)
                except Refused as exc:
                    table.notes.append(f"session of {name} not closed: {exc}")
                    continue
                gone.append(name)
            if gone:
                table.notes.append(f"session expired, cashed out: {', '.join(gone)}")
                table.broadcast()
        return gone

    async def handle(self, table: Table, client: Client, text: str | bytes) -> dict[str, Any]:
        """One message from ``client``: applied (committed, then broadcast) or refused with
        nothing changed. Returns the reply for the sender. What is logged meanwhile is about
        the table, its round and the player (:mod:`pontoon.server.logs`)."""
        rl = table.roundlog
        number = rl.number if rl is not None else table.log.last_number + 1  # (as its state says)
        token = about(table=table.name, round=number, player=client.session.name)
        try:
            return await self._handle(table, client, text)
        finally:
            done(token)

    async def _handle(self, table: Table, client: Client, text: str | bytes) -> dict[str, Any]:
        session = client.session
        start = time.perf_counter()
        try:
            msg = parse(text)
        except BadMessage as exc:
            return error_reply(exc)
        if msg.id is not None and msg.id in session.seen:  # (checked again under the lock)
            return session.seen[msg.id] | {"duplicate": True}
        if session.closed:
            return error_reply(Refused(UNKNOWN, code="auth"), msg.id)
        if msg.type in ("state", "ping"):
            out: dict[str, Any] = {"type": "ok", "ref": msg.id, "version": table.version}
            if msg.type == "state":
                out["refresh"] = self.state_wait(session)
            return out
        try:
            reply = await self._apply(table, client, msg)
        except Refused as exc:
            self.answered["refused"] += 1
            return error_reply(exc, msg.id)
        finally:
            self.applying.add(time.perf_counter() - start)
        self.answered["ok"] += 1
        return reply

    async def _apply(self, table: Table, client: Client, msg: Message) -> dict[str, Any]:
        """``msg`` applied under the table's lock (:meth:`_locked`). With an operator's wallet
        a wager that needs the player's money from it takes the lock twice, the operator asked
        in between with the lock let go (:meth:`Table.paying`): the table serves the others
        while one player's debit waits, and the wager is refused when the operator says no
        (``funds``: declined, or past the player's limits) or nothing (``wallet``)."""
        if self.remote is not None and isinstance(msg, Bet | Act) and client.session.name:
            await self._known(client.session.name, msg.amount or 0)
        if self.door is not None and isinstance(msg, Bet) and client.session.role == "player":
            await self.door.clocks.ready(client.session.name)  # (a store's read, no lock held)
        try:
            return await table.paying(lambda paid: self._locked(table, client, msg, paid))
        except Refused:
            raise
        except WalletError as exc:  # from the operator's wallet: nothing was recorded
            raise Refused(f"not recorded: {exc}", code=getattr(exc, "code", "funds")) from None
        except PontoonError as exc:  # the store refused the debit's row: nothing was sent
            raise Refused(f"not recorded: {exc}", code="error") from None

    async def _known(self, name: str, need: int) -> None:
        """Operator mode: this process's copy of ``name``'s balance at the operator, asked for
        (no lock held) when it has none or less than ``need``: the player was launched, or
        played last, through another process. The operator's no to a debit is the check."""
        assert self.remote is not None and self.wallets is not None
        have = self.wallets.get(name)
        if have is None or have < need:
            with suppress(Declined, Unavailable):
                await self.remote.balance(name)

    async def _locked(
        self, table: Table, client: Client, msg: Message, paid: Paid
    ) -> dict[str, Any]:
        """Apply ``msg`` (the table's lock held), commit it with the debits ``paid`` for it,
        broadcast; or refuse it with nothing changed (:class:`Needs`: rewound, to be paid)."""
        session = client.session
        # Two clicks apply once: the id is looked up and recorded under the lock, so the
        # same message sent at once on two sockets of the session is applied once.
        if msg.id is not None and msg.id in session.seen:
            return session.seen[msg.id] | {"duplicate": True}
        if session.closed:  # left while this message waited for the lock
            raise Refused(UNKNOWN, code="auth")
        if isinstance(msg, Leave):
            if session.role != "player":
                raise Refused("only a player leaves the table", code="role")
            amount = await self.leave(table, session.name, client)
            table.broadcast()
            out = {"type": "ok", "ref": msg.id, "version": table.version, "cashed_out": amount}
            _remember(session, msg.id, out)
            return out
        if isinstance(msg, Reality) or (isinstance(msg, Bet) and self.door is not None):
            if self.door is None or session.role != "player":
                raise Refused("a reality check is a player's, in accounts mode", code="role")
            if isinstance(msg, Reality):
                await self.door.acknowledge(session.name)
                out = {"type": "ok", "ref": msg.id, "version": table.version}
                _remember(session, msg.id, out)
                return out
            self.door.reality_check(session.name)
        v = getattr(msg, "v", None)
        if v is not None and table.stale(session, v):
            raise Refused(
                f"the table has moved on (version {table.version}, not {v}): "
                "look again before you decide",
                code="stale",
            )
        if isinstance(msg, Bet) and self.remote is not None and not paid:
            wants = table.short(session, msg)
            if wants:  # paid for before it is applied (the lock let go meanwhile)
                raise Needs(wants)
        mark = table.mark()
        try:
            if isinstance(msg, Bet):
                table.bet(session, msg)
            elif isinstance(msg, Deal):
                table.deal(session)
            elif isinstance(msg, Act):
                table.act(session, msg)
            elif isinstance(msg, Procedure):
                table.procedure(session, msg)
        except Refused:
            raise
        except PontoonError as exc:
            table.reload()  # an unexpected engine error: the store is the truth
            raise Refused(f"{exc}", code="error") from None
        try:
            ack = (session.digest, msg.id) if session.digest and msg.id else None
            staff = None
            if self.accounts is not None and session.role in STAFF:
                staff = (session.name, session.role, _action_text(msg))
            await table.commit(ack, staff, paid)
        except Needs:  # nothing was recorded: the operator is asked, the lock let go
            table.rewind(mark)  # (as the players were last told: nothing to tell them)
            raise
        except WalletError as exc:  # nothing was recorded
            table.rewind(mark)
            raise Refused(f"not recorded: {exc}", code="funds") from None
        except PontoonError as exc:  # the store refused: the table was taken back from it
            table.broadcast()
            raise Refused(f"not recorded: {exc}", code="error") from None
        reply: dict[str, Any] = {"type": "ok", "ref": msg.id, "version": table.version}
        _remember(session, msg.id, reply)
        table.broadcast()
        return reply


def _action_text(msg: Message) -> str:
    """A staff member's message as the record of staff actions keeps it."""
    return json.dumps(msg.model_dump(exclude_none=True), separators=(",", ":"))


def _remember(session: Session, mid: str | None, reply: dict[str, Any]) -> None:
    """Note the reply to the message ``mid`` applied for ``session`` (under the table's lock):
    the same id again is answered with it, as a duplicate, and not applied."""
    if mid is not None:
        session.seen[mid] = reply
        while len(session.seen) > SEEN:
            session.seen.popitem(last=False)
