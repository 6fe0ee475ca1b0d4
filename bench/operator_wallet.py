"""An operator's wallet for ``bench/server.py --operator``: the four calls the table server
makes (``POST /debit``, ``/credit``, ``/rollback``, ``GET /balance``), each idempotent by its
key and checking the server's bearer JWT, every player starting with the same balance. No
faults: it answers at once, so that the bench measures the server. Runs as a process of its
own: ``python bench/operator_wallet.py PORT SECRET_FILE ISSUER BALANCE``.
"""

from __future__ import annotations

import sys
from typing import Any

import jwt
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def make(secret: str, issuer: str, balance: int) -> Starlette:
    balances: dict[str, int] = {}
    applied: dict[tuple[str, str], int] = {}  # (kind, key) -> the balance it left
    debits: dict[str, int] = {}  # key -> amount, for a rollback
    rolled: set[str] = set()

    def authorised(request: Request) -> bool:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        try:
            jwt.decode(token, secret, algorithms=["HS256"], audience=issuer, issuer="pontoon")
        except jwt.PyJWTError:
            return False
        return True

    async def call(request: Request) -> JSONResponse:
        if not authorised(request):
            return JSONResponse({"error": "bad token"}, 401)
        kind = request.path_params["kind"]
        body: dict[str, Any] = await request.json()
        key, player, amount = str(body["key"]), str(body["player"]), int(body["amount"])
        done = applied.get((kind, key))
        if done is not None:
            return JSONResponse({"balance": done})
        have = balances.setdefault(player, balance)
        if kind == "debit":
            if key in rolled:
                return JSONResponse({"error": "rolled back before it came"}, 409)
            if have < amount:
                return JSONResponse({"error": "insufficient funds"}, 402)
            have -= amount
            debits[key] = amount
        elif kind == "credit":
            have += amount
        elif kind == "rollback":
            if key in debits and key not in rolled:
                have += debits[key]
            rolled.add(key)
        else:
            return JSONResponse({"error": f"no call {kind}"}, 404)
        balances[player] = applied[(kind, key)] = have
        return JSONResponse({"balance": have})

    async def get_balance(request: Request) -> JSONResponse:
        if not authorised(request):
            return JSONResponse({"error": "bad token"}, 401)
        player = request.query_params.get("player", "")
        return JSONResponse({"balance": balances.setdefault(player, balance)})

    routes = [Route("/balance", get_balance), Route("/{kind}", call, methods=["POST"])]
    return Starlette(routes=routes)


def main() -> None:
    port, secret_file, issuer, balance = sys.argv[1:5]
    with open(secret_file, encoding="utf-8") as f:
        secret = f.readline().strip()
    app = make(secret, issuer, int(balance))
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
