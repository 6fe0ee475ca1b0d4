"""The shoe is sealed: ``shoe_states.state`` holds the shoe's future order
encrypted (Fernet) under a key kept outside the database, and a new SQLite file is its
owner's only. On SQLite and, when ``PONTOON_TEST_POSTGRES_URL`` is set, PostgreSQL."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import threading
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from pontoon.errors import InputError
from pontoon.round import Round
from pontoon.rules import load_rules
from pontoon.shoe import Shoe, seeded
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.secret import PREFIX, ShoeKeys, load_keys
from pontoon.store.session import TerminalRecorder
from pontoon.store.shoestate import restore, snapshot
from pontoon.store.trust import rekey
from pontoon.store.verify import verify
from tests.test_store import _crash_mid_round, cli
from tests.test_store import url as url  # the fixture: both back ends

RULES = load_rules("nz-pontoon")


def _key() -> str:
    return Fernet.generate_key().decode()


def _key_file(path: Path, *keys: str, mode: int = 0o600) -> Path:
    path.write_text("# the shoe's keys\n\n" + "".join(k + "\n" for k in keys))
    path.chmod(mode)
    return path


def _deal(url: str, keys: ShoeKeys | None, table: str = "t1", seed: int = 3) -> Shoe:
    """One round dealt and committed (with the shoe) at ``table``; the shoe after it."""
    with Store(url, keys) as store:
        log = TableLog(store, table)
        log.deposit("ana", 10_000)
        shoe = Shoe(RULES, seeded(seed))
        rnd = Round(RULES, shoe)
        rl = log.start(rnd)
        rnd.place_wager(1, "ana", 1000)
        rnd.deal()
        rl.commit(shoe)
    return shoe


def _raw(url: str, table: str = "t1") -> str:
    """``shoe_states.state`` as the database holds it (SQLite: read with plain sqlite3)."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            row = conn.execute("SELECT state FROM shoe_states WHERE table_id = ?", (table,))
            return str(row.fetchone()[0])
    with Store(url) as store, store.read() as conn:
        q = text("SELECT state FROM shoe_states WHERE table_id = :t")
        return str(conn.execute(q, {"t": table}).scalar_one())


def _stored(url: str, keys: ShoeKeys | None, table: str = "t1") -> str:
    with Store(url, keys) as store:
        state = TableLog(store, table).shoe_state
    assert state is not None
    return state[1]


def _set_raw(url: str, value: str, table: str = "t1") -> None:
    with Store(url) as store, store.write() as conn:
        q = text("UPDATE shoe_states SET state = :s WHERE table_id = :t")
        conn.execute(q, {"s": value, "t": table})


def test_the_stored_shoe_is_sealed_yet_resumes_the_same_cards(url: str) -> None:
    keys = ShoeKeys([_key()])
    shoe = _deal(url, keys)
    raw = _raw(url)
    assert raw.startswith(PREFIX)
    with pytest.raises(ValueError):
        json.loads(raw)
    plain = snapshot(shoe)  # no piece of the plain form shows in the stored one
    assert not any(plain[i : i + 12] in raw for i in range(0, len(plain) - 12, 6))
    state = _stored(url, keys)
    assert state == snapshot(shoe)
    twin = restore(RULES, state, None)
    assert [twin.draw() for _ in range(20)] == [shoe.draw() for _ in range(20)]


def test_the_keys_cross_to_a_writer_process_by_pickle() -> None:
    new, old = _key(), _key()
    sealed = ShoeKeys([old]).seal("the shoe", "t", 3)
    keys = pickle.loads(pickle.dumps(ShoeKeys([new, old], "a file")))
    assert keys.source == "a file" and keys.open(sealed, "t", 3) == "the shoe"
    again = keys.seal("again", "t", 4)
    assert ShoeKeys([new]).open(again, "t", 4) == "again"  # the first key still seals


def test_a_wrong_key_is_refused_in_one_line_and_the_row_stays(url: str) -> None:
    _deal(url, ShoeKeys([_key()]))
    before = _raw(url)
    with pytest.raises(InputError) as info:
        _stored(url, ShoeKeys([_key()]))
    msg = str(info.value)
    assert "'t1'" in msg and "--shoe-key-file" in msg and "$PONTOON_SHOE_KEY" in msg
    assert "\n" not in msg
    assert _raw(url) == before


def test_pontoon_play_refuses_a_shoe_its_key_does_not_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    _deal(db, ShoeKeys([_key()]), table="terminal")
    before = _raw(db, "terminal")
    wrong = str(_key_file(tmp_path / "k", _key()))
    code, out = cli(["play", "--db", db, "--shoe-key-file", wrong, "--rounds", "1"], capsys)
    assert code == 2 and out.count("\n") == 1 and "'terminal'" in out
    assert _raw(db, "terminal") == before


@pytest.mark.parametrize("processes", ["1", "2"])
def test_serve_refuses_a_shoe_its_key_does_not_open_before_it_listens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], processes: str
) -> None:
    """As ``play`` does: exit 2 and one line, nothing printed as if it served, nothing
    started (under ``--processes`` the parent checks before it starts a child)."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    _deal(db, ShoeKeys([_key()]), table="kauri")
    before = _raw(db, "kauri")
    wrong = str(_key_file(tmp_path / "k", _key()))
    argv = ["serve", "--port", "0", "--db", db, "--shoe-key-file", wrong, "--table", "kauri"]
    code, out = cli([*argv, "--processes", processes], capsys)
    assert code == 2 and out.count("\n") == 1 and "'kauri'" in out and "sealed" in out, out
    assert _raw(db, "kauri") == before


def _as_before_signing(url: str) -> None:
    """The store as one recorded before heads were signed holds it: no signature at all."""
    with Store(url) as store, store.write() as conn:
        conn.execute(text("UPDATE tables SET signed = NULL"))
        conn.execute(text("DELETE FROM signatures"))


def test_a_clear_state_is_never_dealt_but_an_old_stores_is_sealed_once_by_rekey(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = ShoeKeys([_key()])
    shoe = _deal(url, keys)
    _set_raw(url, snapshot(shoe))  # a clear state written into a signed store
    with pytest.raises(InputError, match=r"'t1'.*not the one the house sealed"):
        _stored(url, keys)
    code, out = cli(["rekey", "--db", url], capsys)  # rekey does not launder it either
    assert code == 2 and "'t1'" in out and "nothing was changed" in out, out
    _as_before_signing(url)  # a store from before: the clear shoe is taken once, as it is
    with pytest.raises(InputError, match="not signed"):
        _stored(url, keys)
    with Store(url, keys) as store:
        assert rekey(store) == (1, 1)
    assert _raw(url).startswith(PREFIX)
    assert _stored(url, keys) == snapshot(shoe)


def test_rekey_rotates_every_shoe_to_the_first_key(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = _key(), _key()
    shoe = _deal(url, ShoeKeys([old]))
    legacy = _deal(url, ShoeKeys([old]), table="t2", seed=4)
    _as_before_signing(url)
    _set_raw(url, snapshot(legacy), "t2")
    both = _key_file(tmp_path / "both", new, old)
    code, out = cli(["rekey", "--db", url, "--shoe-key-file", str(both)], capsys)
    assert code == 0 and "2 shoe" in out and "2 table head" in out
    assert _raw(url, "t2").startswith(PREFIX)
    with pytest.raises(InputError):
        _stored(url, ShoeKeys([old]))
    assert _stored(url, ShoeKeys([new])) == snapshot(shoe)
    assert _stored(url, ShoeKeys([new]), "t2") == snapshot(legacy)


def test_rekey_with_a_key_that_does_not_open_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    _deal(db, ShoeKeys([_key()]))
    before = _raw(db)
    wrong = _key_file(tmp_path / "wrong", _key())
    code, out = cli(["rekey", "--db", db, "--shoe-key-file", str(wrong)], capsys)
    assert code == 2 and out.count("\n") == 1 and "'t1'" in out
    assert _raw(db) == before
    loose = _key_file(tmp_path / "loose", _key(), mode=0o644)
    code, out = cli(["rekey", "--db", db, "--shoe-key-file", str(loose)], capsys)
    assert code == 2 and out.count("\n") == 1 and "mode 644" in out


def test_key_files_open_to_others_or_malformed_are_refused_without_the_key(
    tmp_path: Path,
) -> None:
    key = _key()
    for mode in (0o644, 0o640, 0o602):
        path = _key_file(tmp_path / f"m{mode:o}", key, mode=mode)
        with pytest.raises(InputError, match=f"mode {mode:o}") as info:
            load_keys(str(path))
        assert key not in str(info.value) and "\n" not in str(info.value)
    for bad in (key[:-2], key + "x", "not a key", key.replace("=", "!")):
        path = _key_file(tmp_path / "bad", key, bad)
        with pytest.raises(InputError, match="line 4") as info:
            load_keys(str(path))
        assert key not in str(info.value) and bad not in str(info.value)
    with pytest.raises(InputError, match="no key"):
        load_keys(str(_key_file(tmp_path / "empty")))
    with pytest.raises(InputError, match="cannot read"):
        load_keys(str(tmp_path / "none"))


def test_every_key_opens_and_the_first_seals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _key(), _key()
    old = ShoeKeys([second]).seal("{}", "t", 1)
    for keys in (
        load_keys(str(_key_file(tmp_path / "k", first, second))),
        _env_keys(monkeypatch, f"{first}, {second}"),
    ):
        assert keys.open(old, "t", 1) == "{}"
        assert ShoeKeys([first]).open(keys.seal("{}", "t", 1), "t", 1) == "{}"
    monkeypatch.setenv("PONTOON_SHOE_KEY", f"{first},oops")
    with pytest.raises(InputError, match=r"\$PONTOON_SHOE_KEY") as info:
        load_keys()
    assert first not in str(info.value)


def _env_keys(monkeypatch: pytest.MonkeyPatch, value: str) -> ShoeKeys:
    monkeypatch.setenv("PONTOON_SHOE_KEY", value)
    return load_keys()


def test_the_default_key_file_is_made_once_owner_only_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PONTOON_SHOE_KEY", raising=False)
    made: list[ShoeKeys] = []
    threads = [threading.Thread(target=lambda: made.append(load_keys())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    path = tmp_path / "xdg" / "pontoon" / "shoe.key"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    content = path.read_text()
    sealed = made[0].seal("{}", "t", 1)
    assert len(made) == 8 and all(k.open(sealed, "t", 1) == "{}" for k in made)  # one key
    assert load_keys().open(sealed, "t", 1) == "{}" and path.read_text() == content
    assert list(path.parent.iterdir()) == [path]  # no temporary file left


def test_reading_commands_need_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the public key, which is no secret, for ``verify``; none for the others."""
    db = f"sqlite:///{tmp_path / 'v.db'}"
    _deal(db, ShoeKeys([_key()]))
    code, public = cli(["public-key"], capsys)
    (tmp_path / "record.pub").write_text(public)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PONTOON_SHOE_KEY", raising=False)
    code, out = cli(["verify", "--db", db], capsys)
    assert code == 2 and out.count("\n") == 1 and "--public-key" in out, out
    assert cli(["verify", "--db", db, "--public-key", str(tmp_path / "record.pub")], capsys)[0] == 0
    assert cli(["rounds", "--db", db], capsys)[0] == 0
    assert cli(["export", "--db", db, "--output", str(tmp_path / "out")], capsys)[0] == 0
    assert not (tmp_path / "xdg").exists()


def test_a_new_sqlite_file_and_its_wal_are_its_owners_only(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    old = os.umask(0o022)
    try:
        with Store(f"sqlite:///{path}", ShoeKeys([_key()])) as store:
            TableLog(store, "t1").deposit("ana", 100)
            wal = Path(f"{path}-wal")
            assert wal.exists()
            assert wal.stat().st_mode & 0o777 == 0o600
        assert path.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_an_existing_sqlite_file_open_to_others_is_left_and_named_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "open.db"
    Store(f"sqlite:///{path}").close()
    assert not caplog.records
    path.chmod(0o644)
    Store(f"sqlite:///{path}").close()
    Store(str(path)).close()
    [record] = caplog.records
    assert record.levelname == "WARNING" and "(mode 644): chmod 600 it" in record.getMessage()
    assert record.name == "pontoon.store.db"  # the name docs/operators/store.md gives for it
    assert path.stat().st_mode & 0o777 == 0o644


def test_serve_refuses_a_bad_key_file_before_it_listens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PONTOON_SUPERVISOR_TOKEN", raising=False)
    key = _key()
    loose = _key_file(tmp_path / "loose", key, mode=0o644)
    code, out = cli(["serve", "--port", "0", "--shoe-key-file", str(loose)], capsys)
    assert code == 2 and out.count("\n") == 1 and "mode 644" in out and key not in out
    bad = _key_file(tmp_path / "bad", "x" * 44)
    code, out = cli(["serve", "--port", "0", "--shoe-key-file", str(bad)], capsys)
    assert code == 2 and out.count("\n") == 1 and "not a Fernet key" in out
    monkeypatch.setenv("PONTOON_SHOE_KEY", "nope")
    code, out = cli(["serve", "--port", "0"], capsys)
    assert code == 2 and out.count("\n") == 1 and "$PONTOON_SHOE_KEY" in out


def test_a_deleted_shoe_row_voids_the_open_round_and_a_fresh_shoe_starts(url: str) -> None:
    """A lost key's last resort (docs/operators/store.md): ``rekey --discard-shoe`` deletes the
    row and signs the head without it, the table goes on; the row deleted by hand (by anyone
    without the record key) is refused."""
    _crash_mid_round(url, seed=7, keys=ShoeKeys([_key()]), table="lost")
    with Store(url, ShoeKeys([_key()])) as store:  # (a new key: the old one is lost)
        rekey(store, frozenset(["lost"]))
    rec = TerminalRecorder(url, "lost", RULES, "you", ShoeKeys([_key()]))
    rcv = rec.recover(100_000, 7)
    assert rcv.resumed is None and rcv.voided == [rec.log.last_number]
    shoe = rcv.shoe  # a new shoe, not shuffled yet: the whole pack
    assert shoe.shuffles == 0 and len(shoe.remaining) + len(shoe.discards) == len(shoe.full_pack)
    rec.close()
    with Store(url) as store:
        report = verify(store)
    assert report.ok, report.problems
    assert len(report.notes) == 1 and "'lost'" in report.notes[0], report.notes  # in the record
    _crash_mid_round(url, seed=7, keys=ShoeKeys([_key()]))
    with Store(url) as store, store.write() as conn:
        conn.execute(text("DELETE FROM shoe_states WHERE table_id = 'terminal'"))
    with pytest.raises(InputError, match=r"'terminal'.*shoe is not where the signed head says"):
        TerminalRecorder(url, "terminal", RULES, "you", ShoeKeys([_key()]))
