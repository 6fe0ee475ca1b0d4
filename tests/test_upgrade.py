"""An upgrade across two versions on one PostgreSQL store, as docs/operators/deploying.md
says to make it: the version before the newest schema migration serves the tables and
records a round; this version starts, migrates the store, takes the tables and resumes the
round the previous one left; ``pontoon verify`` finds the store whole — once with the
previous version stopped first, once with it serving beside this one through the migration
(the rolling upgrade). The previous version is this repository's own, taken from its history
(``git archive``): where the history is not there (a shallow clone), the test is skipped.
Nothing here opens the store with this version's code but its server (that would migrate
the store before the previous version had written to it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.test_server_helpers import free_port
from tests.test_store import fresh_database

pytest.importorskip("fastapi")
import httpx
from websockets.sync.client import connect

pytestmark = pytest.mark.integration  # two versions' servers on a PostgreSQL store

ROOT = Path(__file__).resolve().parent.parent
PREVIOUS = "4e41606"  # the last commit before the newest migration (0011: people and disputes)
TOKEN = "upgrade-test-supervisor"
TABLES = ["kauri", "rimu"]


def _previous(tmp_path: Path) -> Path:
    """The previous version's tree, from this repository's history (skipped without it)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git history here")
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{PREVIOUS}^{{commit}}"], check=False
    )
    if found.returncode != 0:
        pytest.skip(f"the history does not hold {PREVIOUS} (a shallow clone)")
    tree = tmp_path / "previous"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", PREVIOUS, "pontoon"], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


@contextmanager
def _serve(tmp_path: Path, source: Path, url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``pontoon serve --lease 3`` of the package at ``source`` on ``url`` (one home: both
    versions read the same keys); its base URL once it answers."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(source), HOME=str(tmp_path))
    cmd = [sys.executable, "-m", "pontoon.cli", "serve", "--port", str(port), "--db", url]
    cmd += ["--lease", "3", "--supervisor-token", TOKEN, "--bankroll", "100000"]
    for name in TABLES:
        cmd += ["--table", name]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _answers(base) or proc.poll() is not None, 60.0)
        assert proc.poll() is None, f"the server at {source} ended with {proc.returncode}"
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.terminate()  # as an operator stops it: it lets go of its leases
        proc.wait(30)


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/tables", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _until(test: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)  # (the poll's interval)


def _held(url: str) -> set[str]:
    """The tables whose lease is held, read in SQL (opening the store with this version's
    code would migrate it)."""
    return set(_sql(url, "SELECT id FROM tables WHERE owner IS NOT NULL"))


def _sql(url: str, query: str) -> list[str]:
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return [str(v) for v in conn.execute(sa.text(query)).scalars()]
    finally:
        engine.dispose()


def _version(url: str) -> str:
    return _sql(url, "SELECT version_num FROM alembic_version")[0]


def _play(base: str, table: str, name: str) -> str:
    """``name`` joins ``table`` at ``base``, wagers and deals: a round is recorded; the
    player's token."""
    joined = httpx.post(f"{base}/api/tables/{table}/join", json={"name": name}, timeout=10)
    assert joined.status_code == 200, joined.text
    token = joined.json()["token"]
    with connect(f"ws://{base[7:]}/ws/{table}?token={token}", origin=base) as ws:
        assert json.loads(ws.recv(timeout=10))["table"] == table
        for msg in ({"type": "bet", "box": 1, "amount": 500}, {"type": "deal"}):
            ws.send(json.dumps(msg | {"id": f"{name}-{msg['type']}"}))
            while (m := json.loads(ws.recv(timeout=10)))["type"] == "state":
                pass
            assert m["type"] == "ok", m
    return str(token)


def _resume(base: str, table: str, token: str) -> None:
    """The round at ``table`` resumed where the previous version left it: its player, back
    with the token it had, makes a legal decision (the round's opening over at once on a
    pontoon: then there is none to make)."""
    state = httpx.get(f"{base}/api/tables/{table}/state", params={"token": token}).json()
    if not state.get("legal"):
        return
    legal = state["legal"][0]
    with connect(f"ws://{base[7:]}/ws/{table}?token={token}", origin=base) as ws:
        json.loads(ws.recv(timeout=10))
        move = {"type": "act", "action": legal["action"], "box": legal["box"], "id": "resumed"}
        ws.send(json.dumps(move))
        while (m := json.loads(ws.recv(timeout=10)))["type"] == "state":
            pass
        assert m["type"] == "ok", m


def test_a_store_the_previous_version_wrote_is_migrated_and_played_on_by_this_one(
    tmp_path: Path,
) -> None:
    previous = _previous(tmp_path)
    with fresh_database("postgresql", tmp_path) as url:
        with _serve(tmp_path, previous, url) as (old, at_old):
            _until(lambda: _held(url) == set(TABLES), 30.0)
            before = _version(url)
            ana = _play(at_old, "kauri", "ana")  # a round in play, by the previous version
            old.terminate()  # stopped as an operator stops it: it lets go of its leases
            old.wait(30)
        with _serve(tmp_path, ROOT, url) as (_, at_new):
            assert _version(url) != before, "this version did not migrate the store"
            _until(lambda: _answers_for(at_new, TABLES), 30.0)
            _resume(at_new, "kauri", ana)
            _play(at_new, "rimu", "ben")
        _verify(tmp_path, url)


def _verify(tmp_path: Path, url: str) -> None:
    """``pontoon verify`` of this version finds the store whole (the servers' keys: one home)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path))
    verify = [sys.executable, "-m", "pontoon.cli", "verify", "--db", url]
    done = subprocess.run(verify, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _answers_for(base: str, tables: list[str]) -> bool:
    listed = httpx.get(f"{base}/api/tables", timeout=5).json()
    here = {t["name"] for t in listed if not t.get("elsewhere")}
    return set(tables) <= here


def test_the_previous_version_goes_on_beside_this_one_through_the_migration(
    tmp_path: Path,
) -> None:
    """The rolling upgrade: this version starts beside the previous one and migrates the
    store while it serves; the previous one goes on recording at the table it holds (a
    player joins, the round in play goes on), then stops, and this one takes its tables,
    resumes the round and plays on."""
    previous = _previous(tmp_path)
    with fresh_database("postgresql", tmp_path) as url:
        with _serve(tmp_path, previous, url) as (old, at_old):
            _until(lambda: _held(url) == set(TABLES), 30.0)
            before = _version(url)
            ana = _play(at_old, "kauri", "ana")  # a round in play: kauri stays with it
            with _serve(tmp_path, ROOT, url) as (_, at_new):
                assert _version(url) != before, "this version did not migrate the store"
                events = int(_sql(url, "SELECT count(*) FROM events")[0])
                joined = httpx.post(f"{at_old}/api/tables/kauri/join", json={"name": "ben"})
                assert joined.status_code == 200, joined.text
                _resume(at_old, "kauri", ana)
                assert int(_sql(url, "SELECT count(*) FROM events")[0]) > events
                old.terminate()
                old.wait(30)
                _until(lambda: _answers_for(at_new, TABLES), 30.0)
                _resume(at_new, "kauri", ana)
                _play(at_new, "rimu", "cy")
        _verify(tmp_path, url)
