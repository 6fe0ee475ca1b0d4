"""The table server under load: bots play on a local server (127.0.0.1 only).

N tables × 3 players (one box each) play for S seconds: each bot bets the table minimum, the
first calls the deal once the three boxes hold wagers, and each decides with a simple rule
(no insurance, hit below 17, else stand), or with ``--chart`` by the table's optimal chart
(``/api/tables/t0/chart``; then ``--keep PATH`` and ``pontoon report --db sqlite:///PATH``
check the tables' hold against theory: docs/operators/audit.md). A bot thinks before each
message it sends: a
random pause, uniform between 0 and twice ``--think`` milliseconds (default 150: a mean of
150 ms, far quicker than people play); ``--think 0`` sends at once, which measures the
server at saturation (then the latency is the queue of the 50 tables' waiting messages).
The bots are cheap, so that the bench measures the server and not them: each socket is read
by picows as its frames arrive (a callback, no task woken for a frame), a bot is woken only
by what it waits for (the reply to its message, or a state that may concern it), and it
decodes a state only then, with orjson (as the server encodes them).

The server runs in its own process (``pontoon serve``) on an SQLite store in a temporary
directory. Reports actions/s (acknowledged messages: wagers, deals, decisions) and the p50/p99
latency from sending a message to its acknowledgement, which comes after the commit and after
the new state was queued for every client of the table (each client has its own writer), and
the p99 again without the first two seconds (``p99_ms_warm``: every bot's first wager comes
in the same 0.3 s, with the tables' first shuffles); the servers' own p50 and p99 of handling
those messages, commit included (``server_p50_ms_at_most``, ``server_p99_ms_at_most``: bounds
from every process's ``/api/stats`` histogram while the bots played); the CPU time the server
and the bots used per action; and the load average of the machine while it ran (the machine is
shared). Then ``pontoon verify`` checks the store and the decisions
acknowledged are counted against the decisions recorded: zero lost, zero duplicated.

``--accounts`` serves in accounts mode: each bot is an account (made in the store before the
server starts, its wallet filled by a cashier's deposit), logs in, joins with its cookie and CSRF
token and plays on a socket that carries the cookie; every wager is then debited from the wallet
and every round's leavings credited, in the transactions of their events; ``verify`` checks the
wallets against the ledger too.

``--operator`` serves in operator mode: the bots are an operator's players, launched with its
tokens (``/launch``), their money in its wallet — ``bench/operator_wallet.py``, a double that
answers at once, in a process of its own — so every wager is a debit call to it (with no table
lock held across it) and every round's leavings a credit.

``--processes N`` serves with ``pontoon serve --processes N`` (the tables spread by lease, a
request for another process's table passed on to it); ``--db URL`` serves from that store (an
empty PostgreSQL database, say) instead of a temporary SQLite file. The server's CPU is that of
all its processes (its store writers' processes too); a PostgreSQL running on this machine
has its backends' CPU for the database reported beside it (``database_cpu_ms_per_action``); the
group-commit figures are one process's. ``--writer thread`` serves with the store's commits on a
thread of the server (``pontoon serve --writer``; its default is a process of their own).

``--metrics`` serves the metrics (``pontoon serve --metrics-port``) and scrapes them every
``--scrape-every`` seconds (15, a common Prometheus interval) while the bots play; the servers'
message counters are reported beside the bots' own counts (``metrics_match``).
``--drills N`` adds N learners of the strategy drill (``/api/train``) beside the bots, each
starting a drill (20 decisions, a preset and a mode at random) and answering it as fast as it
gets its questions, a legal play at random (``--drill-think MS``: after a pause first, uniform
between 0 and twice MS, as a person reads and answers); with ``--accounts`` each is an account
that logs in (its drills are kept under it), else it gives its name. Reported beside the
tables' figures: the drills started and the answers given, their p50/p99 (from sending to the
answer) and the refusals by status (429: an account's pace; 503: the trainer's queue full), and
the CPU of the trainer's worker process (``drill_worker_cpu_share``: left out of the server's
own). The tables' p99 with and without drills, alternated, is what tells whether drills cost
the tables anything (docs/operators/deploying.md).

Last line: one JSON object, also appended to bench/results/server.jsonl (bench/record.py,
which stamps it with the date, commit, machine and load average; its fields:
docs/reference/files.md).
Run: .venv/bin/python bench/server.py [--quick] [--tables N] [--seconds S] [--think MS]
     [--accounts | --operator] [--chart] [--keep PATH] [--processes N] [--db URL]
     [--writer KIND] [--drills N] [--drill-think MS]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import multiprocessing
import os
import random
import socket
import sqlite3
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
from picows import WSFrame, WSListener, WSMsgType, WSTransport, ws_connect

from pontoon.analysis.chart import pair_row, total_row
from pontoon.cards import Card
from pontoon.hand import is_soft, total
from pontoon.server.timing import at_most
from pontoon.sim.reference import wishes

HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


WARM = 2.0  # seconds: p99_ms_warm leaves out the messages sent in them


def _warm(st: Stats) -> list[float]:
    """The latencies of the messages sent ``WARM`` seconds or more after the bots began."""
    return [lat for t0, lat, _, _ in st.trace if t0 - st.start >= WARM]


def _gc_delta(before: Any, after: Any, key: str) -> list[int] | None:
    """What the server's collector did between two ``/api/stats`` (None: not reported)."""
    if not before or not after:
        return None
    return [b - a for a, b in zip(before[key], after[key], strict=True)]


def _each_process(base: str, n: int) -> dict[int, dict[str, Any]]:
    """Every serving process's ``/api/stats``, by its pid: with ``--processes`` the parent
    hands each new connection to its children in turn, so it is asked on new connections
    until each has answered."""
    found: dict[int, dict[str, Any]] = {}
    for _ in range(8 * n):
        stats = httpx.get(f"{base}/api/stats", timeout=10).json()
        found[stats.get("pid", 0)] = stats
        if len(found) >= n:
            break
    return found


def _sum_delta(before: dict[int, Any], after: dict[int, Any], part: str, key: str) -> Any:
    """``after`` less ``before``, summed over the processes, of ``stats[part][key]`` (a
    number or a list of them; a process started meanwhile counts from nothing)."""
    total: Any = None
    for pid, stats in after.items():
        now = stats.get(part, {}).get(key)
        if now is None:
            continue
        was = before.get(pid, {}).get(part, {}).get(key)
        if isinstance(now, list):
            d = [a - b for a, b in zip(now, was or [0] * len(now), strict=True)]
            total = d if total is None else [a + b for a, b in zip(total, d, strict=True)]
        else:
            total = (total or 0) + now - (was or 0)
    return total


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.acts_ok = 0
        self.refused: dict[str, int] = {}
        self.trace: list[tuple[float, float, str, str]] = []  # (sent, latency, type, bot)
        self.start = 0.0  # when the bots began (perf_counter, as the trace)


def _idle(text: str, seated: str | None = None) -> bool:
    """A state that cannot concern this bot: play goes on and it has no legal move; with
    ``seated`` (a bot that waits for the deal another calls), a state of the betting in
    which its box has its wager. The server's state text begins with the table's phase and
    ends with the recipient's own part, ``"legal":[...],"balance":...}``: its first
    ``"phase":`` is the table's, its last ``"legal":`` the bot's (tests/test_bench_server.py
    holds the two together). Decoding every state was a third of the bots' CPU."""
    start = text.find('"phase":"') + 9
    phase = text[start : text.find('"', start)]
    if phase in ("playing", "insurance"):
        return text.startswith('"legal":[]', text.rfind('"legal":'))
    return seated is not None and phase == "betting" and f'"seated":"{seated}"' in text


def chart_wishes(cells: dict[str, list[str]], hand: dict[str, Any], up: str) -> list[str]:
    """The moves the optimal chart asks for, best first, as ``pontoon.sim.reference.chart_move``
    reads a chart (the pair's row, then the total's; a doubled hand rescues or stands, 12)."""
    cards = [Card.parse(c) for c in hand["cards"]]
    col, t, soft = Card.parse(up).value - 1, total(cards), is_soft(cards)
    if hand.get("doubled"):
        code = cells.get(f"X{t}", cells[total_row(t, soft)])[col] if t < 21 else "S"
        return ["rescue", "stand"] if code in ("R", "Rs") else ["stand"]
    asked: list[str] = []
    if len(cards) == 2 and cards[0].value == cards[1].value:
        asked += wishes(cells[pair_row(cards[0].value)][col])
    if t < 21:
        asked += wishes(cells[total_row(t, soft)][col])
    return [*asked, "stand", "hit"]


async def bot(
    base: str,
    table: str,
    name: str,
    box: int,
    first: bool,
    clock: list[float],
    think: float,
    st: Stats,
    joined: asyncio.Barrier,
    go: asyncio.Event,
    accounts: bool,
    chart: dict[str, list[str]] | None,
    operator: str | None = None,
) -> None:
    rng = random.Random(name)
    headers: dict[str, str] = {}
    # (logins queue for the server's two hashing threads: 150 at once take more than httpx's
    # 5 s on a loaded host; the join is not measured)
    async with httpx.AsyncClient(base_url=base, verify=_tls(), timeout=JOIN_SECONDS) as http:
        if operator is not None:  # the operator's player: launched with a token, no password
            r = await http.get("/launch", params={"token": _launch(name, operator), "table": table})
            assert r.status_code == 303, r.text
            r = await http.get("/api/me")
            r.raise_for_status()
            headers = {"X-CSRF-Token": r.json()["csrf"]}
            r = await http.post(f"/api/tables/{table}/join", headers=headers)
            headers = {"Cookie": f"pontoon_session={http.cookies['pontoon_session']}"}
        elif accounts:  # log in: the cookie, and the CSRF token of every change
            r = await http.post("/api/login", json={"name": name, "password": PASSWORD})
            r.raise_for_status()
            headers = {"X-CSRF-Token": r.json()["csrf"]}
            r = await http.post(f"/api/tables/{table}/join", headers=headers)
            headers = {"Cookie": f"pontoon_session={http.cookies['pontoon_session']}"}
        else:
            r = await http.post(f"/api/tables/{table}/join", json={"name": name})
        r.raise_for_status()
        token = r.json()["token"]
    where = f"ws://{base[7:]}/ws/{table}" + ("" if accounts else f"?token={token}")
    seated = None if first else name  # (the first calls the deal: every betting state counts)

    def concerns(text: str) -> bool:
        return not _idle(text, seated)

    transport, sock = await ws_connect(
        Socket, where, extra_headers=headers, websocket_handshake_timeout=JOIN_SECONDS
    )
    assert isinstance(sock, Socket)
    try:
        if not sock.latest:  # (the state sent on connecting may have come with the handshake)
            await sock.state(lambda text: True)
        n = 0
        await joined.wait()  # every bot has joined and connected: the clock starts
        await go.wait()
        stop = clock[0]

        async def request(msg: dict[str, Any]) -> None:
            nonlocal n
            if think:
                await asyncio.sleep(rng.uniform(0, 2 * think))
            n += 1
            msg["id"] = ref = f"{name}-{n}"
            t0 = time.perf_counter()
            reply = sock.reply(ref)
            transport.send(WSMsgType.TEXT, orjson.dumps(msg))
            async with asyncio.timeout(REPLY_SECONDS):
                m = await reply
            st.latencies.append(time.perf_counter() - t0)
            st.trace.append((t0, st.latencies[-1], msg["type"], name))
            if m["type"] == "error":
                st.refused[m.get("code", "?")] = st.refused.get(m.get("code", "?"), 0) + 1
            elif msg["type"] == "act":
                st.acts_ok += 1

        while time.monotonic() < stop:
            if _idle(sock.latest):  # (its own move made, the others' turn)
                try:
                    async with asyncio.timeout(max(0.05, stop - time.monotonic())):
                        await sock.state(concerns)
                except TimeoutError:
                    break
            s = orjson.loads(sock.latest)
            mine = [b for b in s["boxes"] if name in b["players"]]
            if s["phase"] in ("idle", "over") or (s["phase"] == "betting" and not mine):
                await request({"type": "bet", "box": box, "amount": s["rules"]["table_min"]})
                continue
            if s["phase"] == "betting" and first and len(s["boxes"]) >= 3:
                await request({"type": "deal"})
                continue
            legal = s["legal"]
            if legal:
                await request(_decision(s, legal, chart))
                continue
            try:  # (a timeout, not wait_for: that made a task for every wait)
                async with asyncio.timeout(max(0.05, stop - time.monotonic())):
                    await sock.state(concerns)
            except TimeoutError:
                break
    finally:
        if not transport.is_disconnected:
            transport.send_close()
            transport.disconnect()


class Socket(WSListener):
    """A bot's connection, read as its frames arrive. A state is kept as the newest (its text:
    decoded only when the bot acts on it), except while the bot waits for a state it wants
    (:meth:`state`): then one it does not is passed over; a reply is decoded only to see
    whether it is the one the bot waits for (:meth:`reply`)."""

    def __init__(self) -> None:
        self.latest = ""
        self._ref: str | None = None  # the id of the message whose reply is awaited
        self._want: Callable[[str], bool] | None = None  # the states awaited
        self._woken: asyncio.Future[Any] | None = None
        self._closed: Exception | None = None

    def reply(self, ref: str) -> asyncio.Future[dict[str, Any]]:
        """The reply to the message ``ref`` (which is sent after this call)."""
        self._ref, self._want = ref, None
        return self._wait()

    def state(self, want: Callable[[str], bool]) -> asyncio.Future[None]:
        """The next state of which ``want`` holds (its text)."""
        self._ref, self._want = None, want
        return self._wait()

    def _wait(self) -> asyncio.Future[Any]:
        self._woken = asyncio.get_running_loop().create_future()
        if self._closed is not None:
            self._woken.set_exception(self._closed)
        return self._woken

    def _wake(self, value: Any) -> None:
        self._ref, self._want = None, None
        if self._woken is not None and not self._woken.done():
            self._woken.set_result(value)

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type == WSMsgType.CLOSE:
            self.on_ws_disconnected(transport)
            transport.disconnect()
            return
        if frame.msg_type != WSMsgType.TEXT:
            return
        text = frame.get_payload_as_utf8_text()
        if text.startswith('{"type":"state"'):
            if self._want is None:
                self.latest = text
            elif self._want(text):
                self.latest = text
                self._wake(None)
        elif self._ref is not None:
            m = orjson.loads(text)
            if m.get("ref") == self._ref:
                self._wake(m)

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        if self._closed is None:
            self._closed = ConnectionError("the server closed the bot's connection")
        if self._woken is not None and not self._woken.done():
            self._woken.set_exception(self._closed)


DRILL_MODES = ("all", "hard", "soft", "pairs", "weak")  # (every preset offers them)


class DrillStats:
    """The learners' drills: started, answers given, the latency of each (seconds), and the
    refusals by HTTP status."""

    def __init__(self) -> None:
        self.starts = 0
        self.answers = 0
        self.latencies: list[float] = []
        self.refused: dict[str, int] = {}
        self.cpu = 0.0  # the learners' process's CPU seconds while they drilled


async def learner(
    base: str,
    name: str,
    clock: list[float],
    ds: DrillStats,
    joined: asyncio.Barrier,
    go: asyncio.Event,
    accounts: bool,
    presets: list[str],
    think: float = 0.0,
) -> None:
    """A learner of the strategy drill: starts drills and answers each question (a legal play
    at random) at once, or after a pause of ``think`` seconds on average; told to wait (429,
    503), it waits as long as it is told."""
    rng = random.Random(name)
    headers: dict[str, str] = {}
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_SECONDS, verify=_tls()) as http:
        if accounts:  # (the client keeps the cookie; the CSRF token goes in a header)
            r = await http.post("/api/login", json={"name": name, "password": PASSWORD})
            r.raise_for_status()
            headers = {"X-CSRF-Token": r.json()["csrf"]}
        await joined.wait()
        await go.wait()
        stop, doc = clock[0], None
        while time.monotonic() < stop:
            if doc is None or doc["question"] is None:
                path, starting = "/api/train", True
                body: dict[str, Any] = {"rules": rng.choice(presets), "hands": 20}
                body["mode"] = rng.choice(DRILL_MODES)
                if not accounts:
                    body["learner"] = name
            else:
                path, starting = f"/api/train/{doc['id']}", False
                body = {"answer": rng.choice(doc["question"]["legal"])}
                if think:
                    await asyncio.sleep(rng.uniform(0, 2 * think))
            t0 = time.perf_counter()
            try:
                async with asyncio.timeout(max(0.05, stop - time.monotonic())):
                    r = await http.post(path, json=body, headers=headers)
            except TimeoutError:
                break
            except httpx.TransportError:  # (a kept-alive connection the server had closed)
                ds.refused["connection"] = ds.refused.get("connection", 0) + 1
                continue
            if r.is_success:
                ds.latencies.append(time.perf_counter() - t0)
                ds.starts += starting
                ds.answers += not starting
                doc = r.json()
                continue
            code = str(r.status_code)
            ds.refused[code] = ds.refused.get(code, 0) + 1
            if r.status_code in (429, 503):
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
            else:  # (the drill is gone, or its mode refused for these rules: another)
                doc = None


def _learners(
    base: str, drills: int, accounts: bool, presets: list[str], pipe: Any, think: float
) -> None:
    """The learners, in a process of their own (their requests and JSON would take the bots'
    event loop, whose latencies are the measure): they log in and say so on ``pipe``, are
    sent the time to stop (``time.monotonic``: one clock for every process), drill until
    then and send back their :class:`DrillStats`."""

    async def main() -> DrillStats:
        ds, clock = DrillStats(), list[float]()
        joined, go = asyncio.Barrier(drills + 1), asyncio.Event()
        tasks = [
            asyncio.create_task(
                learner(base, f"learner{i}", clock, ds, joined, go, accounts, presets, think)
            )
            for i in range(drills)
        ]
        await joined.wait()
        pipe.send("ready")
        clock.append(await asyncio.to_thread(pipe.recv))
        cpu = _own_cpu()
        go.set()
        await asyncio.gather(*tasks)
        ds.cpu = _own_cpu() - cpu
        return ds

    pipe.send(asyncio.run(main()))


def _decision(
    s: dict[str, Any], legal: list[dict[str, Any]], chart: dict[str, list[str]] | None
) -> dict[str, Any]:
    """The bot's message for its move in the state ``s``: no insurance, else the chart's
    move, else hit below 17 and stand from it."""
    acts = {m["action"]: m for m in legal}
    move = acts.get("no-insurance") or acts.get("decline") or acts.get("complete")
    if move is None:
        b = next(x for x in s["boxes"] if x["box"] == legal[0]["box"])
        hand = b["hands"][s["awaiting"]["hand"]] if s["awaiting"] else b["hands"][0]
        if chart is not None:
            up = s["dealer"]["cards"][0]
            wish = next((a for a in chart_wishes(chart, hand, up) if a in acts), None)
            move = acts[wish] if wish else legal[0]
        else:
            want = "hit" if hand["total"] < 17 else "stand"
            move = acts.get(want) or acts.get("stand") or acts.get("hit") or legal[0]
    msg = {"type": "act", "action": move["action"], "box": move["box"], "v": s["version"]}
    if move.get("follow") is not None:
        msg["follow"] = move["follow"]
    return msg


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every bot's client (the server is plain HTTP on 127.0.0.1): each
    client making its own loaded the CA certificates again, 17 ms a bot, most of the start."""
    return ssl.create_default_context()


PASSWORD = "bench-password"
TILL = "bench-till"  # the cashier who fills the wallets (a name that passes for no role)


ISSUER = "bench-casino"  # the operator of --operator (bench/operator_wallet.py)


def _launch(name: str, secret: str) -> str:
    """The operator's launch token for its player ``name`` (a JWT, HS256, used once)."""
    import uuid

    import jwt

    now = int(time.time())
    claims = {"iss": ISSUER, "aud": "pontoon", "sub": name, "iat": now, "exp": now + 600}
    return str(jwt.encode(claims | {"jti": uuid.uuid4().hex}, secret, "HS256"))


@contextmanager
def _operator(tmp: Path) -> Iterator[tuple[str, list[str]]]:
    """bench/operator_wallet.py in a process of its own, every player's balance 10**8; the
    secret it shares with the server, and the server's options to use it."""
    import secrets as random_secrets

    secret = random_secrets.token_urlsafe(32)
    path = tmp / "operator.secret"
    path.touch(mode=0o600)
    path.write_text(secret + "\n")
    port = _free_port()
    wallet = Path(__file__).with_name("operator_wallet.py")
    cmd = [sys.executable, str(wallet), str(port), str(path), ISSUER, str(10**8)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://{HOST}:{port}/balance", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the operator's wallet did not start") from None
                time.sleep(0.1)
        options = ["--operator-url", f"http://{HOST}:{port}", "--operator-secret-file", str(path)]
        yield secret, [*options, "--operator-issuer", ISSUER, "--password-strength", "minimum"]
    finally:
        proc.terminate()
        proc.wait(10)


def _make_accounts(url: str, tables: int, learners: int = 0) -> None:
    """Every bot's account (argon2id's minimum profile: 150 logins take a few seconds), each
    wallet filled by the cashier; and the drill's learners' (``learner0``...)."""
    from pontoon.store.accounts import Accounts, Movement, Role, hasher
    from pontoon.store.db import Store

    with Store(url) as store:
        people = Accounts(store, hasher("minimum"))
        people.create(TILL, PASSWORD, Role.CASHIER)
        for t in range(tables):
            for i in range(3):
                name = f"bot{t}x{i}"
                people.create(name, PASSWORD)
                people.cashier(name, Movement.DEPOSIT, 10**8, f"bench-{name}", TILL)
        for i in range(learners):
            people.create(f"learner{i}", PASSWORD)


def _counts(url: str) -> tuple[int, int]:
    """The decisions recorded and the rounds played, as the store has them."""
    from sqlalchemy import text

    from pontoon.store.db import Store

    with Store(url) as store, store.read() as conn:
        recorded = conn.execute(
            text("SELECT count(*) FROM events WHERE kind = 'action' AND player IS NOT NULL")
        ).scalar_one()
        rounds = conn.execute(
            text("SELECT count(*) FROM rounds WHERE status = 'over'")
        ).scalar_one()
    return int(recorded), int(rounds)


def _processes() -> dict[int, tuple[int, float, str]]:
    """Every process: its parent, the CPU seconds (user + system) it used so far and its
    command line (Linux)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out[int(entry.name)] = (int(fields[1]), used, cmdline)
    return out


TRAINER = "from multiprocessing"  # the command line of the trainer's worker (and its tracker)


def _cpu(pid: int, trainer: bool | None = None) -> float:
    """CPU seconds used so far by process ``pid`` and every process under it (the processes
    of ``--processes``, the store's writer processes); ``trainer``: only the trainer's worker
    processes (True), or all but them (False)."""
    procs = _processes()

    def under(p: int) -> bool:
        while p > 1:
            if p == pid:
                return True
            p = procs[p][0] if p in procs else 0
        return False

    return sum(
        used
        for p, (_, used, cmd) in procs.items()
        if under(p) and (trainer is None or (TRAINER in cmd) == trainer)
    )


def _database_cpu(url: str) -> dict[int, float]:
    """The CPU seconds used so far by each PostgreSQL backend serving the database of ``url``,
    when it runs on this machine (its processes are named ``postgres: USER DATABASE …``);
    else nothing."""
    if not url.startswith("postgresql") or not any(
        f"@{h}" in url for h in ("127.0.0.1", "localhost", "[::1]")
    ):
        return {}
    name = url.rsplit("/", 1)[1].split("?")[0]
    return {
        p: used
        for p, (_, used, cmd) in _processes().items()
        if cmd.startswith("postgres: ") and cmd.split()[2:3] == [name]
    }


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


REPLY_SECONDS = 120  # a message not answered within this fails the bench (a bot waits no longer)
JOIN_SECONDS = 300  # every bot joined and connected within this, or the bench fails


def _percentile(xs: list[float], q: float) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def run(
    base: str,
    tables: int,
    seconds: float,
    think: float,
    server: int,
    accounts: bool,
    chart: bool,
    drills: int = 0,
    operator: str | None = None,
    drill_think: float = 0.0,
) -> tuple[Stats, DrillStats, float, tuple[float, float], float]:
    """Bots (and ``drills`` learners) join and connect; then they play for ``seconds``.
    Returns the stats, the drills', the seconds played and the CPU seconds the server (but
    its trainer's worker), the trainer's worker and the bots used meanwhile."""
    st, ds = Stats(), DrillStats()
    cells, presets = None, []
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        if chart:  # every table has the same rules: one chart (worked out by the server)
            cells = (await http.get("/api/tables/t0/chart")).json()["cells"]
        if drills:
            presets = (await http.get("/api/train/options")).json()["rules"]
    clock: list[float] = []
    joined, go = asyncio.Barrier(tables * 3 + 1), asyncio.Event()
    learners, pipe = None, None
    if drills:  # (spawned: this process has the bots' threads)
        ctx = multiprocessing.get_context("spawn")
        pipe, theirs = ctx.Pipe()
        args = (base, drills, accounts, presets, theirs, drill_think)
        learners = ctx.Process(target=_learners, args=args, daemon=True)
        learners.start()
    bots = [
        asyncio.create_task(
            bot(
                base,
                f"t{t}",
                f"bot{t}x{i}",
                i + 1,
                i == 0,
                clock,
                think,
                st,
                joined,
                go,
                accounts,
                cells,
                operator,
            )
        )
        for t in range(tables)
        for i in range(3)
    ]
    gate = asyncio.ensure_future(joined.wait())
    done, _ = await asyncio.wait(
        [gate, *bots], timeout=JOIN_SECONDS, return_when=asyncio.FIRST_COMPLETED
    )
    if gate not in done:  # a bot ended, or some never joined: say so, do not wait forever
        gate.cancel()
        for b in bots:
            b.cancel()
        why = repr(next(iter(done)).exception()) if done else f"not all in {JOIN_SECONDS} s"
        raise SystemExit(f"the bots did not all join and connect: {why}")
    if pipe is not None:  # the learners have logged in
        async with asyncio.timeout(JOIN_SECONDS):
            await asyncio.to_thread(pipe.recv)
    print(f"every bot joined and connected; playing {seconds:g} s", file=sys.stderr, flush=True)
    gc.collect()
    gc.disable()  # the bots make no cycles worth a pause in the middle of a round trip
    cpu0, train0, mine0 = _cpu(server, False), _cpu(server, True), _own_cpu()
    start = time.monotonic()
    clock.append(start + seconds)
    if pipe is not None:
        pipe.send(start + seconds)
    st.start = time.perf_counter()
    go.set()
    await asyncio.gather(*bots)
    elapsed = time.monotonic() - start
    if pipe is not None and learners is not None:
        async with asyncio.timeout(REPLY_SECONDS):
            ds = await asyncio.to_thread(pipe.recv)
        learners.join(30)
    gc.enable()
    cpu = (_cpu(server, False) - cpu0, _cpu(server, True) - train0)
    return st, ds, elapsed, cpu, _own_cpu() - mine0


class _Scraper:
    """Scrapes every process's ``/metrics`` (``--metrics-port``, child i at the port + i) every
    ``every`` seconds on a thread of its own until :meth:`stop`; its first and last message
    counters."""

    def __init__(self, port: int, processes: int, every: float) -> None:
        import threading

        self.every = every
        self.urls = [f"http://{HOST}:{port + i}/metrics" for i in range(processes)]
        self.before = self._answered()
        self.scrapes = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _answered(self) -> Counter[str]:
        from prometheus_client.parser import text_string_to_metric_families

        out: Counter[str] = Counter()
        for u in self.urls:
            for family in text_string_to_metric_families(httpx.get(u, timeout=10).text):
                for s in family.samples:
                    if s.name == "pontoon_messages_total":
                        out[s.labels["answer"]] += int(s.value)
        return out

    def _run(self) -> None:
        while not self.done.wait(self.every):
            self._answered()
            self.scrapes += 1

    def stop(self) -> dict[str, Any]:
        self.done.set()
        self.thread.join()
        return {"before": self.before, "after": self._answered(), "scrapes": self.scrapes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (5 tables, 5 s)")
    parser.add_argument("--tables", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument(
        "--think", type=float, default=150.0, help="a bot's mean pause before a message, ms"
    )
    parser.add_argument("--deflate", action="store_true", help="serve with --deflate")
    parser.add_argument(
        "--writer", choices=("process", "thread"), help="serve with --writer (default: its own)"
    )
    parser.add_argument(
        "--accounts", action="store_true", help="accounts mode: bots log in, wallets pay"
    )
    parser.add_argument(
        "--operator",
        action="store_true",
        help="operator mode: bots launched by an operator whose wallet pays (a local double)",
    )
    parser.add_argument(
        "--chart", action="store_true", help="bots play the optimal chart (else hit below 17)"
    )
    parser.add_argument("--keep", metavar="PATH", help="keep the store there (SQLite file)")
    parser.add_argument(
        "--db", metavar="URL", help="an empty store to serve from (default: SQLite, temporary)"
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="serve --processes N (the tables by lease)"
    )
    parser.add_argument(
        "--drills", type=int, default=0, help="N learners of the strategy drill beside the bots"
    )
    parser.add_argument(
        "--drill-think", type=float, default=0.0, help="a learner's mean pause before an answer, ms"
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="serve --metrics-port and scrape it while the bots play; report its "
        "message counters beside the bots' own counts",
    )
    parser.add_argument(
        "--scrape-every",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="with --metrics: the scrapes' interval (default 15)",
    )
    args = parser.parse_args()
    tables = args.tables or (5 if args.quick else 50)
    seconds = args.seconds or (5.0 if args.quick else 60.0)
    port = _free_port()
    base = f"http://{HOST}:{port}"
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        db = Path(tmp) / "bench.db"
        url = args.db or f"sqlite:///{db}"
        cmd = [
            sys.executable,
            "-m",
            "pontoon.cli",
            "serve",
            "--host",
            HOST,
            "--port",
            str(port),
            "--db",
            url,
            "--bankroll",
            "100000000",
            "--supervisor-token",
            "bench-supervisor",
        ]
        for t in range(tables):
            cmd += ["--table", f"t{t}"]
        if args.deflate:
            cmd.append("--deflate")
        if args.writer:
            cmd += ["--writer", args.writer]
        if args.processes > 1:
            cmd += ["--processes", str(args.processes)]
        metrics_port = _free_port() if args.metrics else None
        if metrics_port is not None:
            cmd += ["--metrics-port", str(metrics_port)]
        operator = None
        if args.operator:
            operator, options = stack.enter_context(_operator(Path(tmp)))
            cmd += options
        elif args.accounts:
            _make_accounts(url, tables, args.drills)
            cmd += ["--accounts", "--password-strength", "minimum"]
        # the server's log to a file (a pipe nobody read would stop the server once full)
        log = (Path(tmp) / "server.log").open("wb")
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60
            waiting = [f"t{t}" for t in range(tables)]
            with httpx.Client(base_url=base, timeout=1, verify=_tls()) as http:
                while waiting:  # every table served (by lease, with --processes)
                    try:
                        while waiting and http.get(f"/api/tables/{waiting[0]}/state").is_success:
                            waiting.pop(0)
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("the server did not start")
                    if waiting:
                        time.sleep(0.1)
            before = _each_process(base, args.processes)
            gc0 = next(iter(before.values())).get("gc")
            try:  # the bots are cheaper on uvloop (the server uses it too, via uvicorn)
                import uvloop

                asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
            except ImportError:
                pass
            database0 = _database_cpu(url)
            scraper = (
                _Scraper(metrics_port, args.processes, args.scrape_every) if metrics_port else None
            )
            st, ds, elapsed, (server_cpu, train_cpu), bots_cpu = asyncio.run(
                run(
                    base,
                    tables,
                    seconds,
                    args.think / 1000,
                    server.pid,
                    args.accounts or args.operator,
                    args.chart,
                    args.drills,
                    operator,
                    args.drill_think / 1000,
                )
            )
            scraped = scraper.stop() if scraper is not None else None
            database1 = _database_cpu(url)
            database_cpu = sum(t - database0.get(p, 0.0) for p, t in database1.items())
            after = _each_process(base, args.processes)
            stats = after.get(next(iter(before)), next(iter(after.values())))
            gc1 = stats.get("gc")
            writes = {k: _sum_delta(before, after, "store", k) for k in stats["store"]}
            applying = _sum_delta(before, after, "applying", "counts")
            load = os.getloadavg()
        finally:
            server.terminate()
            server.wait(30)
            log.close()
            errors = (Path(tmp) / "server.log").read_text(errors="replace")
            if "Traceback" in errors:  # (said, not hidden: the figures may owe something to it)
                print(f"the server logged errors:\n{errors[-4000:]}", file=sys.stderr)
        verified = (
            subprocess.run(
                [sys.executable, "-m", "pontoon.cli", "verify", "--db", url],
                capture_output=True,
                text=True,
            ).returncode
            == 0
        )
        recorded, rounds = _counts(url)
        if args.keep:  # for `pontoon report --db sqlite:///PATH`
            con = sqlite3.connect(db)
            con.execute("VACUUM INTO ?", (args.keep,))
            os.chmod(args.keep, 0o600)
            con.close()
    if os.environ.get("BENCH_TRACE"):
        Path(os.environ["BENCH_TRACE"]).write_text(json.dumps(st.trace))
    lost = max(0, st.acts_ok - recorded)
    duplicated = max(0, recorded - st.acts_ok)
    result = {
        "bench": "server",
        "tables": tables,
        "players": tables * 3,
        "seconds": round(elapsed, 1),
        "actions": len(st.latencies),
        "actions_per_second": round(len(st.latencies) / elapsed, 1),
        "p50_ms": round(_percentile(st.latencies, 0.50) * 1000, 2),
        "p99_ms": round(_percentile(st.latencies, 0.99) * 1000, 2),
        # without the first WARM seconds' messages (every bot's first wager at once)
        "p99_ms_warm": round(_percentile(_warm(st), 0.99) * 1000, 2),
        "rounds": rounds,
        "decisions_acknowledged": st.acts_ok,
        "decisions_recorded": recorded,
        "lost": lost,
        "duplicated": duplicated,
        "refused": st.refused,
        "think_ms": args.think,
        "deflate": args.deflate,
        "writer": args.writer or "default",
        "server_cpu_ms_per_action": round(server_cpu * 1000 / max(1, len(st.latencies)), 3),
        "bots_cpu_ms_per_action": round(bots_cpu * 1000 / max(1, len(st.latencies)), 3),
        "server_cpu_share": round(server_cpu / elapsed, 2),
        # a PostgreSQL on this machine: its backends' CPU for this database (else null)
        "database_cpu_ms_per_action": round(database_cpu * 1000 / max(1, len(st.latencies)), 3)
        if database1
        else None,
        "load_average_1m": round(load[0], 2),
        # how long the servers took over the bots' messages, from reading one to posting its
        # answer (its commit and broadcast included): bounds from their histograms
        "server_p50_ms_at_most": at_most(applying, 0.50) if applying else None,
        "server_p99_ms_at_most": at_most(applying, 0.99) if applying else None,
        "store_commits": writes["commits"],  # (the processes' own, while the bots played)
        "writes_per_commit": round(writes["batches"] / max(1, writes["commits"]), 2),
        "ms_per_commit": round(writes["seconds"] * 1000 / max(1, writes["commits"]), 2),
        # the writer's CPU in them, its thread's or its process's (the rest: the disk, the GIL)
        "cpu_ms_per_commit": round(writes["cpu_seconds"] * 1000 / max(1, writes["commits"]), 2),
        # the server's cyclic collector while the bots played: passes by generation, freed
        "gc_passes": _gc_delta(gc0, gc1, "collections"),
        "gc_freed": _gc_delta(gc0, gc1, "collected"),
        # requests one process passed on to another (--processes: one process's, by kind)
        "passed_on": stats.get("passed_on", {}),
        "verify": "ok" if verified else "BROKEN",
        "store": url.split(":", 1)[0].split("+")[0],
        "accounts": args.accounts,
        "operator": args.operator,
        "processes": args.processes,
        "cores": os.cpu_count(),
        # the drill's learners beside the bots (--drills): what they were answered, how fast
        "drills": args.drills,
        "drill_think_ms": args.drill_think,
        "drill_starts": ds.starts,
        "drill_answers": ds.answers,
        "drill_answers_per_second": round(ds.answers / elapsed, 1),
        "drill_p50_ms": round(_percentile(ds.latencies, 0.50) * 1000, 1),
        "drill_p99_ms": round(_percentile(ds.latencies, 0.99) * 1000, 1),
        "drill_refused": ds.refused,
        "drill_worker_cpu_share": round(train_cpu / elapsed, 2),
        # the learners' own process (a client's work, on this host beside the server's)
        "drill_learners_cpu_share": round(ds.cpu / elapsed, 2),
    }
    if scraped is not None:  # --metrics: the servers' counters against the bots' own counts
        answered = scraped["after"] - scraped["before"]
        result |= {
            "metrics_scrapes": scraped["scrapes"],
            "metrics_scrape_seconds": args.scrape_every,
            "metrics_messages": {k: int(v) for k, v in answered.items()},
            "metrics_match": answered.get("ok", 0) + answered.get("refused", 0) == len(st.latencies)
            and answered.get("refused", 0) == sum(st.refused.values()),
        }
    print(
        f"{tables} tables × 3 players, {elapsed:.0f} s: {result['actions_per_second']} actions/s, "
        f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms "
        f"({result['p99_ms_warm']} ms after the first {WARM:g} s; in the servers p50 ≤ "
        f"{result['server_p50_ms_at_most']}, p99 ≤ {result['server_p99_ms_at_most']} ms); "
        f"{rounds} rounds; "
        f"lost {lost}, duplicated {duplicated}; verify {result['verify']}; think {args.think} ms; "
        f"server CPU {result['server_cpu_ms_per_action']} ms/action, bots "
        f"{result['bots_cpu_ms_per_action']}"
        + (f", database {database_cpu * 1000 / len(st.latencies):.3f}" if database1 else "")
        + f"; load {result['load_average_1m']}"
        + (
            f"; drills: {args.drills} learners, {ds.starts} started, {ds.answers} answers "
            f"(p50 {result['drill_p50_ms']}, p99 {result['drill_p99_ms']} ms), refused "
            f"{ds.refused}, worker {result['drill_worker_cpu_share']} of a core"
            if args.drills
            else ""
        )
    )
    from record import emit  # bench/record.py, beside this file

    emit(result)


if __name__ == "__main__":
    main()
