"""The durable round store: every round recorded, replayable card by card, tamper-evident and
crash-safe (docs/operators/store.md).

- :mod:`pontoon.store.db` -- :class:`~pontoon.store.db.Store`: SQLite or PostgreSQL by URL,
  schema created and upgraded (Alembic) on open; one transaction per append.
- :mod:`pontoon.store.chain` -- the hash chain and the ledger entries, pure.
- :mod:`pontoon.store.recorder` -- :class:`~pontoon.store.recorder.TableLog` and
  :class:`~pontoon.store.recorder.RoundLog`: write-ahead recording, balances, voiding.
- :mod:`pontoon.store.session` -- ``pontoon play --db``: recovery of an interrupted session.
- :mod:`pontoon.store.verify`, :mod:`pontoon.store.show`, :mod:`pontoon.store.export` --
  ``pontoon verify``, ``replay``/``rounds`` and ``export``.

Importing this package is cheap: SQLAlchemy is loaded by the modules that use it.
"""
