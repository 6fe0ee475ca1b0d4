"""The table server: several Pontoon tables played from the browser, over a WebSocket
protocol, every round recorded write-ahead in the round store (docs/operators/deploying.md).

Needs the ``server`` extra (FastAPI, uvicorn, pydantic). :func:`create_app` builds the ASGI
application; ``pontoon serve`` runs it.
"""

from __future__ import annotations
