"""The strategy drill: its page (``/train``), ``GET /api/train/options``, ``POST /api/train``
(a new drill) and ``POST /api/train/{id}`` (the learner's play). In accounts mode only a
logged-in account drills (with the CSRF header); the drills are
:class:`pontoon.server.train.Drills` (``app.state.drills``)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse

from pontoon.rules import PRESETS
from pontoon.train import MODES

from ..train import AnswerRequest, StartRequest
from . import STATIC, Endpoint, door, drills, setup


async def _owner(request: Request) -> str | None:
    """The logged-in account that drills (accounts mode), else None."""
    if not setup(request).accounts:
        return None
    account, _ = await door(request).need(request, changes=True)
    return account.name


async def train_page() -> FileResponse:
    return FileResponse(STATIC / "train.html")


async def train_options(request: Request) -> dict[str, Any]:
    return {"rules": list(PRESETS), "modes": list(MODES), "accounts": setup(request).accounts}


async def train_start(body: StartRequest, request: Request) -> dict[str, Any]:
    return await drills(request).start(body, await _owner(request))


async def train_answer(key: str, body: AnswerRequest, request: Request) -> dict[str, Any]:
    return await drills(request).answer(key, body, await _owner(request))


ROUTES = [
    Endpoint("GET", "/train", train_page),
    Endpoint("GET", "/api/train/options", train_options),
    Endpoint("POST", "/api/train", train_start),
    Endpoint("POST", "/api/train/{key}", train_answer),
]
