"""The strategy drill's page of the table server (``/train``) and its API.

``POST /api/train`` starts a drill (``rules``: a preset's name, ``mode``, ``hands``,
``seed``) and answers ``{"id", "question", "messages"}``; ``POST /api/train/{id}`` sends the
learner's play and answers ``{"grade", "question", "messages"}`` (``question`` null and
``summary`` set when the drill is over). The drill is :class:`pontoon.train.strategy.Drill`,
the command's own, stepped as a generator; its analysis runs on a worker thread, never on the
event loop. Drills are kept in memory (:data:`MAX_DRILLS` at most, the oldest let go first)
and forgotten when over or idle for :data:`IDLE` seconds. With a ``learner`` name each
graded decision goes to the server's round store and the weak-cells schedule comes from the
learner's record, as ``pontoon train strategy --learner`` does (a name, not an account).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Final

from fastapi import FastAPI
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.rules import PRESETS, load_rules
from pontoon.store.db import Store
from pontoon.train import MODES
from pontoon.train.records import rows_of, schedule_of, session_stamp
from pontoon.train.strategy import Drill, Question

from .table import Refused

MAX_DRILLS: Final = 200
IDLE: Final = 1800.0  # seconds


class StartRequest(BaseModel):
    rules: str = Field("nz-pontoon", max_length=64)
    mode: str = Field("all", max_length=16)
    hands: int = Field(20, ge=1, le=200)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    learner: str | None = Field(None, max_length=200)


class AnswerRequest(BaseModel):
    answer: str = Field(max_length=16)


@dataclass
class _Running:
    drill: Drill
    steps: Generator[Question, str | None, None]
    question: Question | None = None
    messages: list[str] = field(default_factory=list)
    seen: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one answer at a time
    learner: str | None = None  # whose record the decisions go to
    session: str = ""


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


class Drills:
    """The drills under way."""

    def __init__(self, store: Callable[[], Store]) -> None:
        self.store = store  # the server's round store (learners' records)
        self.running: OrderedDict[str, _Running] = OrderedDict()
        self.charts: dict[str, Chart] = {}  # each rule set's optimal chart, worked out once

    def _forget_idle(self) -> None:
        now = time.monotonic()
        for key in [k for k, r in self.running.items() if now - r.seen > IDLE]:
            del self.running[key]
        while len(self.running) >= MAX_DRILLS:
            self.running.popitem(last=False)

    def _advance(self, run: _Running, answer: str | None) -> None:
        """Step the drill to its next question (blocking: the analysis)."""
        grader = run.drill.grader
        name = grader.rules.name
        if name not in self.charts:
            self.charts[name] = grader.chart
        grader.chart = self.charts[name]
        try:
            run.question = next(run.steps) if answer is None else run.steps.send(answer)
        except StopIteration:
            run.question = None

    def _reply(self, key: str, run: _Running) -> dict[str, Any]:
        out: dict[str, Any] = {"id": key, "question": _question(run.question)}
        out["messages"], run.messages[:] = list(run.messages), []
        if run.question is None:
            out["summary"] = run.drill.summary()
            self.running.pop(key, None)
        return out

    async def start(self, body: StartRequest) -> dict[str, Any]:
        if body.rules not in PRESETS:
            raise Refused(f"unknown rule set {body.rules!r}: one of {', '.join(PRESETS)}")
        if body.mode not in MODES:
            raise Refused(f"unknown mode {body.mode!r}: one of {', '.join(MODES)}")
        self._forget_idle()
        messages: list[str] = []
        try:
            drill = Drill(load_rules(body.rules), body.mode, body.seed, _no_ask, messages.append)
        except InputError as exc:
            raise Refused(str(exc)) from None
        run = _Running(drill, drill.steps(body.hands), messages=messages)
        learner = (body.learner or "").strip()
        if learner:
            run.learner, run.session = learner, session_stamp()
            past = await run_in_threadpool(
                self.store().learner_decisions, learner, "strategy", drill.rules.name
            )
            drill.schedule = schedule_of(past)
        key = secrets.token_urlsafe(16)
        self.running[key] = run
        await run_in_threadpool(self._advance, run, None)
        return self._reply(key, run)

    async def answer(self, key: str, body: AnswerRequest) -> dict[str, Any]:
        run = self.running.get(key)
        if run is None:
            raise Refused("no such drill (over, or idle too long): start another", code="auth")
        async with run.lock:
            q = run.question
            if q is None or body.answer not in q.legal:
                legal = ", ".join(q.legal) if q is not None else "none"
                raise Refused(f"{body.answer!r} is not a play here: {legal}")
            run.seen = time.monotonic()
            before = len(run.drill.decisions)
            await run_in_threadpool(self._advance, run, body.answer)
            out = self._reply(key, run)
            if len(run.drill.decisions) > before:
                made = run.drill.decisions[before]
                out["grade"] = made.to_json()
                if run.learner:
                    d = run.drill
                    rows = rows_of(run.learner, run.session, d.rules.name, d.mode, [made])
                    await run_in_threadpool(self.store().record_decisions, rows)
            return out


def _no_ask(q: Question) -> str | None:  # the page answers through the API, not this
    raise AssertionError("a web drill is stepped, not asked")


def add_routes(app: FastAPI, static: Any, store: Callable[[], Store]) -> None:
    """``/train``, ``POST /api/train`` and ``POST /api/train/{id}`` on ``app`` (``store``:
    the server's round store, once it is open)."""
    drills = Drills(store)

    @app.get("/train")
    async def train_page() -> FileResponse:
        return FileResponse(static / "train.html")

    @app.get("/api/train/options")
    async def train_options() -> dict[str, Any]:
        return {"rules": list(PRESETS), "modes": list(MODES)}

    @app.post("/api/train")
    async def train_start(body: StartRequest) -> dict[str, Any]:
        return await drills.start(body)

    @app.post("/api/train/{key}")
    async def train_answer(key: str, body: AnswerRequest) -> dict[str, Any]:
        return await drills.answer(key, body)


__all__ = ["Drills", "add_routes"]
