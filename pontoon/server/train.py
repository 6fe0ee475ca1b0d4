"""The strategy drill's page of the table server (``/train``) and its API.

``POST /api/train`` starts a drill (``rules``: a preset's name, ``mode``, ``hands``,
``seed``) and answers ``{"id", "question", "messages"}``; ``POST /api/train/{id}`` sends the
learner's play and answers ``{"grade", "question", "messages"}`` (``question`` null and
``summary`` set when the drill is over). The drill is :class:`pontoon.train.strategy.Drill`,
the command's own, stepped as a generator in the trainer's worker: one process of its own
under Linux's SCHED_IDLE (:data:`LOWER`), using at most :attr:`Pace.share` of a core
(:class:`Worker`), so that its analysis never takes the interpreter lock, nor a core the
tables want; at most :attr:`Pace.waiting` steps wait for it (then 503).
Drills are kept in memory (:data:`MAX_DRILLS` at most, the oldest let go first) and forgotten
when over or idle for :data:`IDLE` seconds.

Open server: anyone drills; with a ``learner`` name each graded decision goes to the server's
round store and the weak-cells schedule comes from the learner's record, as ``pontoon train
strategy --learner`` does (a name, not an account). Accounts mode: only a logged-in account
drills (401; 403 without the CSRF header), its decisions always kept under its own name (a
``learner`` that is another's is refused, 403), a drill answered only by the account that
started it (404 to any other); each account has at most :attr:`Pace.per_account` drills (a
new one lets its oldest go), one step in the worker at a time, and starts and answers at
most at :class:`Pace`'s rates (429, with ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import functools
import math
import multiprocessing
import os
import secrets
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from pontoon.errors import InputError, PontoonError
from pontoon.rules import PRESETS, load_rules
from pontoon.store.db import Store
from pontoon.train import MODES
from pontoon.train.grade import Grader
from pontoon.train.records import rows_of, schedule_of, session_stamp
from pontoon.train.strategy import Drill, Question

from .errors import Forbidden, NotFound, Refused, RequestError, Throttled, TryLater
from .limits import Bucket

MAX_DRILLS: Final = 200
IDLE: Final = 1800.0  # seconds
NICE: Final = 19  # the worker's CPU priority where Linux's SCHED_IDLE is not to be had
# The worker's first act, before it imports anything (so that the second of CPU its imports
# take, and the threads numpy starts, come after it): Linux's SCHED_IDLE, below every nice
# value, which any other task of the server's autogroup waking on its core preempts at once (a
# task at nice 19 is let finish its slice: the tables' p99 doubled beside a busy worker at
# nice 19). The worker stays in the server's session, hence its autogroup: the scheduler
# compares tasks of two autogroups by their groups, and a worker in a group of its own (even at
# the group's lowest weight) ran out its slice before the tables' task it woke beside; the
# tables' warm p99 doubled again (docs/operators/deploying.md). Elsewhere the lowest nice. (Run
# by ``exec``: a function of this module could not run before the module is imported, nor
# ``os.sched_param`` be pickled.)
LOWER: Final = f"""
import os
try:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
except (AttributeError, OSError):
    os.setpriority(os.PRIO_PROCESS, 0, {NICE})
"""
# where the analysis runs: "process" (or "thread": docs/operators/deploying.md)
WORKER: Final = "process"


@dataclass(frozen=True)
class Pace:
    """What the trainer allows: ``waiting`` steps queued for the worker at most (everyone's);
    per account (accounts mode), drills kept, starts and answers (a burst, then a rate a
    second)."""

    waiting: int = 16
    # of a core, at most, for everyone's drills (the worker rests between): at a quarter the
    # tables' warm p99 rose 74 % beside learners answering at machine speed, at a tenth 19 %
    # (docs/operators/deploying.md)
    share: float = 0.1
    step_seconds: float = 60.0  # a step not done by then is given up (503), its drill let go
    per_account: int = 3
    start_rate: float = 0.1  # one drill every 10 s after a burst of 5
    start_burst: int = 5
    answer_rate: float = 2.0  # a person answers once a second or two; a script no faster
    answer_burst: int = 10
    accounts_kept: int = 10_000  # accounts whose buckets are remembered (the least recent go)


PACE = Pace()


class StartRequest(BaseModel):
    rules: str = Field("nz-pontoon", max_length=64)
    mode: str = Field("all", max_length=16)
    hands: int = Field(20, ge=1, le=200)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    learner: str | None = Field(None, max_length=200)


class AnswerRequest(BaseModel):
    answer: str = Field(max_length=16)


# ---------------------------------------------------------------- in the worker


@dataclass
class _Held:
    """A drill under way, in the worker."""

    drill: Drill
    steps: Generator[Question, str | None, None]
    messages: list[str]


_HELD: dict[str, _Held] = {}  # the worker's drills, by id
_GRADERS: dict[str, Grader] = {}  # each rule set's: its chart and hands' values, for every drill


def _question(q: Question | None) -> dict[str, Any] | None:
    if q is None:
        return None
    return {
        "cards": [c.code for c in q.cards],
        "dealer": q.up.code,
        "legal": list(q.legal),
        "doubled": q.doubled,
        "prompt": q.prompt,
    }


def _no_ask(q: Question) -> str | None:  # the page answers through the API, not this
    raise AssertionError("a web drill is stepped, not asked")


def _advance(key: str, held: _Held, answer: str | None) -> dict[str, Any]:
    """Step the drill to its next question: ``question``, ``messages``, and ``summary`` when
    it is over (then it is let go); ``error`` when the drill cannot go on."""
    drill = held.drill
    drill.grader = _GRADERS.setdefault(drill.rules.name, drill.grader)
    before = len(drill.decisions)
    try:
        q = next(held.steps) if answer is None else held.steps.send(answer)
    except StopIteration:
        q = None
    except InputError as exc:  # no decision of the mode came up
        _HELD.pop(key, None)
        return {"error": str(exc)}
    except Exception:  # a fault of the drill's: it cannot go on (the server logs it, 500)
        _HELD.pop(key, None)
        raise
    out: dict[str, Any] = {"question": _question(q), "messages": list(held.messages)}
    held.messages.clear()
    if len(drill.decisions) > before:
        made = drill.decisions[before]
        out["grade"] = made.to_json()
        (out["row"],) = rows_of("", "", drill.rules.name, drill.mode, [made])
    if q is None:
        out["summary"] = drill.summary()
        _HELD.pop(key, None)
    return out


def _begin(
    key: str,
    rules: str,
    mode: str,
    seed: int | None,
    hands: int,
    past: list[tuple[str, bool]] | None,
    drop: list[str],
) -> dict[str, Any]:
    """A new drill, to its first question (``past``: the learner's cells and answers)."""
    _forget(drop)
    messages: list[str] = []
    try:
        drill = Drill(load_rules(rules), mode, seed, _no_ask, messages.append)
    except InputError as exc:
        return {"error": str(exc)}
    if past is not None:
        drill.schedule = schedule_of([{"cell": c, "correct": k} for c, k in past])
    held = _HELD[key] = _Held(drill, drill.steps(hands), messages)
    return _advance(key, held, None)


def _step(key: str, answer: str, drop: list[str]) -> dict[str, Any]:
    """The learner's play in drill ``key``; ``gone`` when this worker does not hold it (it
    was started again since)."""
    _forget(drop)
    held = _HELD.get(key)
    if held is None:
        return {"gone": True}
    return _advance(key, held, answer)


def _forget(keys: list[str]) -> None:
    for key in keys:
        _HELD.pop(key, None)


_WATCHED: list[int] = []  # the server the worker process watches (once it has begun)
_REST: list[float] = [0.0]  # the worker rests until then (time.monotonic) before a step


def _in_worker(share: float, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in the worker, which uses at most ``share`` of a core: a step that took
    t seconds of CPU is followed by a rest of t * (1 / share - 1) before the next. A worker
    process ends when the server that started it is gone (a server killed with SIGKILL leaves
    no worker behind). (Its priority was lowered before it imported anything: :data:`LOWER`.)"""
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None and not _WATCHED:
        _WATCHED.append(parent.pid)

        def watch(pid: int) -> None:
            while os.getppid() == pid:
                time.sleep(1.0)
            os.kill(os.getpid(), signal.SIGKILL)  # (its main thread waits on a queue)

        threading.Thread(target=watch, args=(parent.pid,), daemon=True).start()
    time.sleep(max(0.0, _REST[0] - time.monotonic()))
    used = time.process_time()
    try:
        return fn(*args)
    finally:
        used = time.process_time() - used
        _REST[0] = time.monotonic() + used * (1 / share - 1)


def _worker_pid() -> int:
    return os.getpid()


# ---------------------------------------------------------------- in the server


class Gone(PontoonError):
    """The worker ended (killed, or out of memory): the drills it held are lost."""


class Slow(PontoonError):
    """A step waited longer than :attr:`Pace.step_seconds` (in the queue and in the worker):
    given up, so that no request waits on the trainer for long (a server stopping waits for
    its requests); its drill is let go (the worker may have stepped it meanwhile)."""


def _busy(text: str) -> TryLater:
    return TryLater(text, retry_after=5)


class Worker:
    """Where the drills are stepped: one process (``kind`` ``"process"``, started at the first
    drill and again after it ends) or one thread of the server (``"thread"``). Its calls
    queue: one runs at a time, and it uses at most ``share`` of a core (:func:`_in_worker`).
    The process's priority is lowered first thing (:data:`LOWER`)."""

    def __init__(self, kind: str = WORKER, share: float = 1.0) -> None:
        self.kind = kind
        self.share = share
        self.pool: Executor | None = None

    def _pool(self) -> Executor:
        if self.pool is None:
            if self.kind == "thread":
                self.pool = ThreadPoolExecutor(1, thread_name_prefix="pontoon-train")
            else:
                self.pool = ProcessPoolExecutor(
                    1,
                    mp_context=multiprocessing.get_context("spawn"),  # (the server has threads)
                    initializer=exec,
                    initargs=(LOWER,),
                )
        return self.pool

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        job = functools.partial(_in_worker, self.share, fn, *args)
        try:
            return await loop.run_in_executor(self._pool(), job)
        except BrokenProcessPool:
            if self.pool is not None:
                self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
            raise Gone from None

    def close(self) -> None:
        """Let the worker go at once (the server stops): a step under way is abandoned, not
        waited for (it would hold the server's exit for as long as its rest and its step)."""
        if self.pool is not None:
            # (the executor's processes: ProcessPoolExecutor.kill_workers from Python 3.14)
            processes = list((getattr(self.pool, "_processes", None) or {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.kill()
            self.pool = None


@dataclass
class _Running:
    """A drill under way, as the server knows it (its state is in the worker)."""

    owner: str | None  # the account that started it (accounts mode)
    question: dict[str, Any] | None = None
    seen: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one answer at a time
    learner: str | None = None  # whose record the decisions go to
    session: str = ""


@dataclass
class _Account:
    """An account's pace: its buckets, and whether a step of its is in the worker."""

    starts: Bucket
    answers: Bucket
    busy: bool = False


class Drills:
    """The drills under way."""

    def __init__(self, store: Callable[[], Store], pace: Pace | None = None) -> None:
        self.store = store  # the server's round store (learners' records)
        self.pace = pace or PACE
        self.worker = Worker(share=self.pace.share)
        self.running: OrderedDict[str, _Running] = OrderedDict()
        self.accounts: OrderedDict[str, _Account] = OrderedDict()
        self.dropped: list[str] = []  # let go here, to be let go in the worker too
        self.waiting = 0  # steps sent to the worker and not answered

    def _drop(self, key: str) -> None:
        if self.running.pop(key, None) is not None:
            self.dropped.append(key)

    def _forget_idle(self, owner: str | None) -> None:
        now = time.monotonic()
        for key in [k for k, r in self.running.items() if now - r.seen > IDLE]:
            self._drop(key)
        if owner is not None:
            mine = [k for k, r in self.running.items() if r.owner == owner]
            for key in mine[: max(0, len(mine) - self.pace.per_account + 1)]:
                self._drop(key)
        while len(self.running) >= MAX_DRILLS:
            self._drop(next(iter(self.running)))

    def _account(self, owner: str) -> _Account:
        a = self.accounts.get(owner)
        if a is None:
            p = self.pace
            a = _Account(Bucket(p.start_rate, p.start_burst), Bucket(p.answer_rate, p.answer_burst))
            self.accounts[owner] = a
            while len(self.accounts) > p.accounts_kept:
                self.accounts.popitem(last=False)
        self.accounts.move_to_end(owner)
        return a

    def _paced(self, owner: str | None, bucket: str) -> _Account | None:
        """The account's pace, checked (429) and taken: one step at a time, and ``bucket``'s
        rate."""
        if owner is None:
            return None
        a = self._account(owner)
        if a.busy:
            raise Throttled("one step at a time: wait for the answer to your last")
        wait = (a.starts if bucket == "starts" else a.answers).take()
        if wait > 0:
            what = "drills started" if bucket == "starts" else "answers"
            raise Throttled(
                f"too many {what}: try again in {math.ceil(wait)} s", retry_after=math.ceil(wait)
            )
        return a

    async def _work(self, a: _Account | None, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn`` in the worker (503 when too many steps wait for it already)."""
        if self.waiting >= self.pace.waiting:
            raise TryLater("the trainer is busy: try again in a moment", retry_after=1)
        drop, self.dropped = self.dropped, []
        self.waiting += 1
        if a is not None:
            a.busy = True
        try:
            async with asyncio.timeout(self.pace.step_seconds):
                return await self.worker.call(fn, *args, drop)
        except TimeoutError:
            raise Slow from None
        except asyncio.CancelledError:  # the server stops (serve's STOP_SECONDS): a 503
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            raise TryLater("the server is stopping: try again in a moment", retry_after=5) from None
        except Gone:
            self.running.clear()  # (their states were the ended worker's)
            self.dropped.clear()
            raise
        finally:
            self.waiting -= 1
            if a is not None:
                a.busy = False

    def _reply(self, key: str, run: _Running, step: dict[str, Any]) -> dict[str, Any]:
        if "error" in step:
            self._drop(key)
            raise Refused(step["error"])
        run.question = step["question"]
        out: dict[str, Any] = {"id": key, "question": run.question, "messages": step["messages"]}
        if "summary" in step:
            out["summary"] = step["summary"]
            self.running.pop(key, None)  # (the worker let it go)
        return out

    async def start(self, body: StartRequest, owner: str | None = None) -> dict[str, Any]:
        """A new drill (``owner``: the logged-in account, in accounts mode)."""
        if body.rules not in PRESETS:
            raise Refused(f"unknown rule set {body.rules!r}: one of {', '.join(PRESETS)}")
        if body.mode not in MODES:
            raise Refused(f"unknown mode {body.mode!r}: one of {', '.join(MODES)}")
        learner = (body.learner or "").strip()
        if owner is not None:
            if learner and learner != owner:
                raise Forbidden(
                    f"a drill is kept under your own account ({owner}): leave out learner"
                )
            learner = owner
        a = self._paced(owner, "starts")
        self._forget_idle(owner)
        run = _Running(owner)
        past = None
        if learner:
            run.learner, run.session = learner, session_stamp()
            rows = await run_in_threadpool(
                self.store().learner_decisions, learner, "strategy", body.rules
            )
            past = [(str(r["cell"]), bool(r["correct"])) for r in rows]
        key = secrets.token_urlsafe(16)
        self.running[key] = run
        try:
            step = await self._work(
                a, _begin, key, body.rules, body.mode, body.seed, body.hands, past
            )
        except Gone:
            raise TryLater("the trainer was restarted: start again") from None
        except Slow:
            self._drop(key)
            raise _busy("the trainer is too busy to start a drill now: try again later") from None
        except BaseException:
            self._drop(key)
            raise
        return self._reply(key, run, step)

    def _gone(self, owner: str | None, text: str) -> NotFound | Refused:
        if owner is not None:  # (another's drill is not told apart from none)
            return NotFound(text)
        return Refused(text, code="auth")

    async def answer(
        self, key: str, body: AnswerRequest, owner: str | None = None
    ) -> dict[str, Any]:
        """The learner's play in drill ``key`` (``owner``: as :meth:`start`)."""
        run = self.running.get(key)
        if run is None or run.owner != owner:
            raise self._gone(owner, "no such drill (over, or idle too long): start another")
        async with run.lock:
            q = run.question
            if q is None or body.answer not in q["legal"]:
                legal = ", ".join(q["legal"]) if q is not None else "none"
                raise Refused(f"{body.answer!r} is not a play here: {legal}")
            a = self._paced(owner, "answers")
            run.seen = time.monotonic()
            try:
                step = await self._work(a, _step, key, body.answer)
            except Gone:
                step = {"gone": True}
            except Slow:
                self._drop(key)
                text = "the trainer is too busy: this drill was let go, start another later"
                raise _busy(text) from None
            except RequestError:
                raise
            except Exception:  # (a fault of the drill's: let go here too)
                self._drop(key)
                raise
            if step.get("gone"):
                self._drop(key)
                raise self._gone(owner, "the trainer was restarted: start another drill")
            out = self._reply(key, run, step)
            if "grade" in step:
                out["grade"] = step["grade"]
                if run.learner:
                    row = step["row"] | {"learner": run.learner, "session": run.session}
                    await run_in_threadpool(self.store().record_decisions, [row])
            return out

    async def worker_pid(self) -> int:
        """The worker's process id (this process's, for a thread)."""
        pid: int = await self.worker.call(_worker_pid)
        return pid


__all__ = ["PACE", "Drills", "Pace", "Worker"]
