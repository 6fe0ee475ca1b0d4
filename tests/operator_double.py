"""A test double of an operator's wallet: debit, credit, rollback and balance, each
idempotent by its key, behind faults chosen by a seeded generator — a call that fails before
it is applied (500), one applied whose answer is lost (500 after), one answered too late for
the caller's timeout — and faults a test sets by hand: ``answer`` (a kind of call answered
with that status, 4xx or 5xx, and not applied: a rollback refused, a credit declined) and
``hang`` (a player's debits held that many seconds before they are applied: an operator that
does not answer in time). It checks our bearer JWT. What it applied is kept for the test to
read."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import jwt
from fastapi import FastAPI, Header
from fastapi.responses import JSONResponse


class Operator:
    def __init__(
        self,
        secret: str,
        balances: dict[str, int],
        seed: int = 1,
        fail: float = 0.0,
        lost: float = 0.0,
        slow: float = 0.0,
        slow_seconds: float = 0.5,
    ) -> None:
        self.secret = secret
        self.balances = dict(balances)
        self.rng = random.Random(seed)
        self.fail, self.lost, self.slow, self.slow_seconds = fail, lost, slow, slow_seconds
        self.applied: dict[tuple[str, str], dict[str, Any]] = {}  # (kind, key) -> answer
        self.rolled_back: set[str] = set()  # debit keys taken back (or refused for ever)
        self.calls: list[tuple[str, str]] = []  # every call received, faults too
        self.answer: dict[str, int] = {}  # kind -> status answered, the call not applied
        self.hang: dict[str, float] = {}  # player -> seconds each of their debits is held
        self.held = 0  # debits being held now
        self.lock = asyncio.Lock()

    def _apply(self, kind: str, key: str, player: str, amount: int) -> tuple[int, dict[str, Any]]:
        done = self.applied.get((kind, key))
        if done is not None:  # the same key again: the same answer, applied once
            return 200, done
        have = self.balances.get(player)
        if have is None:
            return 404, {"error": f"no player {player}"}
        if kind == "debit":
            if key in self.rolled_back:
                return 409, {"error": "rolled back before it came"}
            if have < amount:
                return 402, {"error": "insufficient funds"}
            self.balances[player] = have - amount
        elif kind == "credit":
            self.balances[player] = have + amount
        else:  # rollback of the debit with this key, if it was applied
            if ("debit", key) in self.applied and key not in self.rolled_back:
                self.balances[player] = have + self.applied[("debit", key)]["amount"]
            self.rolled_back.add(key)
        answer = {"balance": self.balances[player], "amount": amount}
        self.applied[(kind, key)] = answer
        return 200, answer

    def app(self) -> FastAPI:
        app = FastAPI()

        def authorised(header: str | None) -> bool:
            try:
                jwt.decode(
                    (header or "").removeprefix("Bearer "),
                    self.secret,
                    algorithms=["HS256"],
                    audience="kiwi-casino",
                    issuer="pontoon",
                )
            except jwt.PyJWTError:
                return False
            return True

        @app.post("/{kind}")
        async def call(
            kind: str, body: dict[str, Any], authorization: str | None = Header(None)
        ) -> JSONResponse:
            if not authorised(authorization):
                return JSONResponse({"error": "who are you"}, 401)
            if kind not in ("debit", "credit", "rollback"):
                return JSONResponse({"error": "no such call"}, 404)
            self.calls.append((kind, body["key"]))
            if kind in self.answer:
                status = self.answer[kind]
                return JSONResponse({"error": f"the operator says no to this {kind}"}, status)
            if kind == "debit" and body["player"] in self.hang:
                self.held += 1
                try:
                    await asyncio.sleep(self.hang[body["player"]])  # the hang under test
                finally:
                    self.held -= 1
            roll = self.rng.random()
            if roll < self.fail:
                return JSONResponse({"error": "down"}, 500)
            if roll < self.fail + self.slow:
                await asyncio.sleep(self.slow_seconds)  # the caller has given up by now
            async with self.lock:
                status, answer = self._apply(kind, body["key"], body["player"], body["amount"])
            lost = self.fail + self.slow <= roll < self.fail + self.slow + self.lost
            if status == 200 and lost:
                return JSONResponse({"error": "answer lost"}, 500)  # applied all the same
            return JSONResponse(answer, status)

        @app.get("/balance")
        async def balance(player: str, authorization: str | None = Header(None)) -> JSONResponse:
            if not authorised(authorization):
                return JSONResponse({"error": "who are you"}, 401)
            if player not in self.balances:
                return JSONResponse({"error": f"no player {player}"}, 404)
            return JSONResponse({"balance": self.balances[player]})

        return app
