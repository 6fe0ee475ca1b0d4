"""Each shoe committed to before its first card leaves it and revealed when it ends
(docs/operators/fairness.md): at every shuffle, in the record, in the stored shoe, at the table
server (a player's state, the pit boss's close, the check the page runs) and at the terminal."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cryptography.fernet import Fernet

from pontoon.cards import pack
from pontoon.cli import main
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.replay import replay
from pontoon.round import Round
from pontoon.rules import RuleSet, load_rules
from pontoon.shoe import Shoe, commitment_of, read_shoe_text, seeded
from pontoon.store.commitments import check
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog
from pontoon.store.revealed import chain_of
from pontoon.store.session import TerminalRecorder
from pontoon.store.shoestate import advance, restore, snapshot

ONE_DECK = load_rules("nz-pontoon", {"decks": "1"})
HEX = re.compile(r"[0-9a-f]{64}")
Chain = list[tuple[int, int | None, Event]]


def _play(rnd: Round) -> None:
    """Hit below 17, else stand; the defaults where players behind or insurance wait."""
    while not rnd.over:
        cur = rnd.current()
        moves = rnd.legal_moves()
        if cur is None or not moves:
            rnd.apply_defaults()
            continue
        want = "stand" if cur[1].total >= 17 else "hit"
        rnd.apply(next((m for m in moves if m.action == want), moves[0]))


def _rounds(rules: RuleSet, shoe: Shoe, n: int, boxes: int = 3, at: int = -1) -> list[Round]:
    """``n`` rounds on ``boxes`` boxes; in round ``at`` the supervisor finds the cutting card
    missing (16.10: the shoe is reshuffled when the round ends)."""
    out = []
    for i in range(n):
        rnd = Round(rules, shoe)
        for b in range(1, boxes + 1):
            rnd.place_wager(b, f"p{b}", 1000)
        rnd.deal()
        if i == at:
            rnd.apply_irregularity(Irregularity("missing-cutting-card", by="supervisor"))
        _play(rnd)
        out.append(rnd)
    return out


def _chain(rounds: list[Round]) -> Chain:
    """The rounds' events as one table's chain: seq 1, 2, ...; round ids 1, 2, ..."""
    out: Chain = []
    for rid, rnd in enumerate(rounds, 1):
        out += [(len(out) + 1 + i, rid, e) for i, e in enumerate(rnd.events)]
    return out


@pytest.fixture(scope="module")
def played() -> list[Round]:
    """One deck, seed 1: shuffles 7, 16.7 (the shoe ran out mid-round), 8.7, 8.8 and 16.10."""
    return _rounds(ONE_DECK, Shoe(ONE_DECK, seeded(1)), 14, at=11)


# ------------------------------------------------------------------ the record
def test_every_kind_of_shuffle_commits_before_its_first_card_and_the_next_reveals_it(
    played: list[Round],
) -> None:
    chain = _chain(played)
    evts = [e for _, _, e in chain]
    shuffles = [i for i, e in enumerate(evts) if e.kind == "shuffle"]
    assert [evts[i].rule for i in shuffles] == ["7", "16.7", "8.7", "8.8", "8.7", "16.10"]
    opened: str | None = None
    for n, i in enumerate(shuffles):
        e = evts[i]
        assert e.detail is not None and HEX.fullmatch(e.detail), e
        before = evts[i - 1]
        if n == 0:
            assert before.kind != "disclose"  # the first shoe ends no shoe
        else:  # the shoe that ends is revealed first, under the rule of the shuffle
            assert before.kind == "disclose" and before.rule == e.rule
            assert commitment_of(before.detail or "") == opened
        after = evts[i + 1]  # the first card out of the new shoe: burnt, or drawn (16.7)
        if e.rule == "16.7":
            assert after.kind == "deal" and after.card is not None
        else:
            assert after.kind == "burn" and after.rule == "8.1"
        shoe = (
            read_shoe_text(evts[shuffles[n + 1] - 1].detail or "")
            if n + 1 < len(shuffles)
            else None
        )
        if shoe is not None:  # its first card is the one that left first
            assert shoe.cards[0].code == after.card
        opened = e.detail
    assert check("t", chain) == []


def test_a_replayed_round_writes_the_recorded_log_exactly(played: list[Round]) -> None:
    for rnd in played:
        assert replay(rnd.events).events == rnd.events


def test_a_round_that_shuffles_before_its_wagers_replays_exactly() -> None:
    """The table server opens a round with the shuffle it needs, before any wager."""
    shoe = Shoe(ONE_DECK, seeded(4))
    rnd = Round(ONE_DECK, shoe)
    rnd.ready_shoe()
    assert [e.kind for e in rnd.events] == ["rules", "shuffle", "burn"]
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    assert [e.kind for e in rnd.events].count("shuffle") == 1  # the deal finds it ready
    _play(rnd)
    assert replay(rnd.events).events == rnd.events
    assert replay(rnd.events[:5]).events == rnd.events[:5]


def _tampered(chain: Chain, seq: int, **change: Any) -> Chain:
    return [(s, r, e._replace(**change) if s == seq else e) for s, r, e in chain]


def _first(chain: Chain, kind: str) -> tuple[int, Event]:
    return next((s, e) for s, _, e in chain if e.kind == kind)


def test_the_check_names_the_event_whose_card_the_shoe_did_not_hold(played: list[Round]) -> None:
    chain = _chain(played)
    reveal, committed = _first(chain, "disclose")[0], _first(chain, "shuffle")[0]
    deal = next(s for s, _, e in chain if e.kind == "deal" and e.box is not None)
    card = next(e.card for s, _, e in chain if s == deal)
    other = "KC" if card != "KC" else "QC"
    problems = check("t", _tampered(chain, deal, card=other))
    pattern = (
        rf"table 't' event {reveal}: the revealed shoe's card \d+ is {card}, but event "
        rf"{deal} \(round 1\) shows {other} leaving it \(the shoe committed to at event "
        rf"{committed}\)"
    )
    assert len(problems) == 1 and re.fullmatch(pattern, problems[0]), problems


def test_the_check_names_a_reveal_that_is_not_the_shoe_committed_to(played: list[Round]) -> None:
    chain = _chain(played)
    reveal, text = next((s, e.detail or "") for s, _, e in chain if e.kind == "disclose")
    committed, shuffle = _first(chain, "shuffle")
    lines = text.split("\n")
    cards = lines[3].split(" ")
    cards[5], cards[6] = cards[6], cards[5]  # two cards the shoe had not dealt swapped
    swapped = "\n".join([*lines[:3], " ".join(cards), ""])
    problems = check("t", _tampered(chain, reveal, detail=swapped))
    assert problems == [
        f"table 't' event {reveal}: the revealed shoe hashes to {commitment_of(swapped)[:16]}…, "
        f"not to the commitment made at event {committed} ({(shuffle.detail or '')[:16]}…)"
    ]
    malformed = check("t", _tampered(chain, reveal, detail=text.replace("cut", "cutting")))
    assert malformed == [
        f"table 't' event {reveal}: the revealed shoe cannot be read: the cut is not a number"
    ]


def test_the_check_names_a_shoe_never_revealed_and_a_reveal_of_no_shoe(
    played: list[Round],
) -> None:
    chain = _chain(played)
    reveal, committed = _first(chain, "disclose")[0], _first(chain, "shuffle")[0]
    dropped = [c for c in chain if c[0] != reveal]
    assert check("t", dropped) == [
        f"table 't' event {reveal + 1}: a new shoe is committed to while the shoe committed to "
        f"at event {committed} was never revealed"
    ]
    again = [*chain[:reveal], (reveal, None, chain[reveal - 1][2]), *chain[reveal:]]
    assert f"table 't' event {reveal}: a shoe is revealed, but none is committed to" in check(
        "t", again
    )


# ------------------------------------------------------------------ the generator and the salt
def test_same_seed_same_commitments_and_the_salt_draws_nothing_from_the_generator() -> None:
    def commitments(seed: int) -> list[str]:
        heard: list[str] = []
        shoe = Shoe(ONE_DECK, seeded(seed))
        shoe.listener = lambda kind, rule, card, detail: (
            heard.append(detail) if kind == "shuffle" and detail else None
        )
        for _ in range(4):
            shoe.shuffle("8.7")
        return heard

    assert commitments(3) == commitments(3) and len(set(commitments(3))) == 4
    assert not set(commitments(3)) & set(commitments(4))
    # the shuffles are the generator's own, as before there were commitments
    shoe, rng = Shoe(ONE_DECK, seeded(5)), np.random.default_rng(5)
    cards_in_shoe: list[Any] = []  # next card last, as the shoe keeps them
    rack = list(pack("spanish", 1))
    for _ in range(3):
        cards = cards_in_shoe + rack
        rng.shuffle(cards)
        burnt = cards.pop()
        cards_in_shoe, rack = cards, [burnt]
        shoe.shuffle("8.7")
        assert shoe.remaining == cards_in_shoe[::-1] and shoe.discards == rack
    secure = [Shoe(ONE_DECK, None) for _ in range(2)]
    for s in secure:
        s.start_round()
    assert secure[0].state().salt != secure[1].state().salt
    assert len(secure[0].state().salt or b"") == 32


# ------------------------------------------------------------------ the stored shoe
def test_the_stored_shoe_carries_its_commitment_and_an_old_one_commits_at_its_next_shuffle() -> (
    None
):
    shoe = Shoe(ONE_DECK, seeded(8))
    shoe.start_round()
    text = snapshot(shoe)
    data = json.loads(text)
    assert {"order", "left", "salt", "rack"} <= set(data) and data["left"] == 1  # the burn card
    for _ in range(5):
        shoe.draw()
    assert advance(text, 5) == snapshot(shoe)
    twin = restore(ONE_DECK, advance(text, 5), None)
    assert twin.commitment == shoe.commitment and twin.remaining == shoe.remaining
    heard: list[tuple[str, str | None]] = []
    twin.listener = lambda kind, rule, card, detail: heard.append((kind, detail))
    twin.shuffle("8.7")
    assert heard[0][0] == "disclose" and commitment_of(heard[0][1] or "") == shoe.commitment
    # a shoe stored before commitments: its cards, no order, no salt
    state = shoe.state()
    old = json.dumps(
        {
            "rules_sha256": data["rules_sha256"],
            "cards": " ".join(c.code for c in reversed(state.cards)),
            "discards": " ".join(c.code for c in state.discards),
            "behind_cut": state.behind_cut,
            "cut_reached": state.cut_reached,
            "shuffles": state.shuffles,
            "rng": None,
        }
    )
    legacy = restore(ONE_DECK, old, None)
    assert legacy.commitment is None and legacy.remaining == shoe.remaining
    assert advance(old, 2) != old and restore(ONE_DECK, advance(old, 2), None).commitment is None
    heard.clear()
    legacy.listener = lambda kind, rule, card, detail: heard.append((kind, detail))
    legacy.shuffle("8.7")
    assert [k for k, _ in heard] == ["shuffle", "burn"] and HEX.fullmatch(heard[0][1] or "")


def test_a_six_deck_shoe_stays_under_the_toast_threshold_at_its_largest() -> None:
    """Its order and rack one character a card: at its largest (the whole order and every
    other card in the rack) the plain text stays under 1,400 bytes, sealed under 2,000."""
    rules = load_rules("nz-pontoon")
    fernet = Fernet(Fernet.generate_key())
    for rng in (seeded(3), None):  # a seeded shoe keeps its generator's state too
        shoe = Shoe(rules, rng)
        shoe.start_round()
        shoe.discard([shoe.draw() for _ in range(len(shoe.remaining))])
        text = snapshot(shoe)
        bound = json.dumps(["t" * 64, 2**63 - 1]) + "\n" + text  # as sealed for its table
        sealed = "fernet:" + fernet.encrypt(bound.encode()).decode()
        assert len(text) < 1_400 and len(sealed) < 2_000, (len(text), len(sealed))


def test_a_taken_back_shuffle_takes_its_commitment_back() -> None:
    shoe = Shoe(ONE_DECK, seeded(2))
    shoe.start_round()
    before, state = shoe.commitment, shoe.state()
    mark = shoe.checkpoint()
    shoe.shuffle("8.7")
    assert shoe.commitment != before
    shoe.rollback(mark)
    assert shoe.commitment == before and shoe.state() == state


# ------------------------------------------------------------------ a restarted table
def test_a_table_restarted_after_a_crash_reveals_the_shoe_it_committed_to(tmp_path: Path) -> None:
    from tests.test_store import _crash_mid_round

    url = f"sqlite:///{tmp_path / 's.db'}"
    _crash_mid_round(url, seed=5)  # a terminal session dealt a round and died
    rules = load_rules("nz-pontoon")
    rec = TerminalRecorder(url, "terminal", rules, "you")
    got = rec.recover(100_000, 5)
    assert got.resumed is not None
    rnd = got.resumed.round
    _play(rnd)
    got.resumed.commit(got.shoe)
    for _ in range(200):  # on until the shoe ends
        if any(e.kind == "disclose" for e in rnd.events):
            break
        rnd = Round(rules, got.shoe)
        rl = rec.start(rnd)
        rnd.place_wager(1, "you", 500)
        rnd.deal()
        _play(rnd)
        rl.commit(got.shoe)
    rec.close()
    with Store(url) as store:
        chain = chain_of(store, "terminal")
    shuffles = [e for _, _, e in chain if e.kind == "shuffle"]
    reveal = next(e for _, _, e in chain if e.kind == "disclose")
    assert commitment_of(reveal.detail or "") == shuffles[0].detail  # made before the crash
    assert check("terminal", chain) == []


# ------------------------------------------------------------------ pontoon play
def test_pontoon_play_shows_the_commitment_and_notes_the_reveal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'p.db'}"
    monkeypatch.setattr(sys, "stdin", io.StringIO("\ns\nh\n" * 200))
    args = ["play", "--seed", "1", "--set", "decks=1", "--rounds", "12", "--db", db]
    assert main(args) == 0
    out = capsys.readouterr().out
    committed = re.findall(r"The shoe is committed to before its first card: SHA-256 (\w+)\.", out)
    revealed = re.findall(r"The last shoe is revealed: .* \(SHA-256 (\w+)\) \(rule [\d.]+\)\.", out)
    assert len(committed) >= 2 and revealed == committed[: len(revealed)] and revealed
    with Store(db) as store:
        chain = chain_of(store, "terminal")
    assert [e.detail for _, _, e in chain if e.kind == "shuffle"] == committed
    assert check("terminal", chain) == []


# ------------------------------------------------------------------ the table server
def _verdict(doc: dict[str, Any]) -> str:
    """What the page's check (static/shoecheck.js) says of a revealed shoe, run by Node."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the page's check is not run")
    script = Path(__file__).parent.parent / "pontoon/server/static/shoecheck.js"
    run = (
        f"const {{shoeVerdict}} = require({json.dumps(str(script))});"
        "let d = ''; process.stdin.on('data', (c) => d += c);"
        "process.stdin.on('end', () => shoeVerdict(JSON.parse(d), new Set())"
        ".then((v) => process.stdout.write(v)));"
    )
    done = subprocess.run(
        [node, "-e", run], input=json.dumps(doc), capture_output=True, text=True, check=True
    )
    return done.stdout


def _decide(p: Any, s: dict[str, Any]) -> None:
    """``p`` makes a move of the state ``s`` offers: no insurance, stand, else the first."""
    moves = {m["action"]: m for m in s["legal"]}
    move = moves.get("no-insurance") or moves.get("stand") or next(iter(moves.values()), None)
    if move is None:  # (nothing of ana's to decide in this state: look again)
        time.sleep(0.05)  # (the poll's interval)
    else:
        assert p.act(move["action"], move["box"])["type"] == "ok"


def _server_round(p: Any) -> dict[str, Any]:
    """``p`` bets and plays a round out (stand where it may); the state at its end."""
    assert p.send(type="bet", box=1, amount=1000)["type"] == "ok"
    assert p.send(type="deal")["type"] == "ok"
    deadline = time.monotonic() + 60  # (a loaded host's table: not a count of tries)
    while time.monotonic() < deadline:
        s = p.fresh()
        if s["phase"] == "over":
            return s
        _decide(p, s)
    raise AssertionError("the round did not end")


@pytest.mark.integration
def test_a_players_state_shows_the_commitment_before_any_card_and_nothing_of_the_order(
    tmp_path: Path,
) -> None:
    pytest.importorskip("fastapi")
    from pontoon.server.app import create_app
    from pontoon.server.table import TableConfig
    from tests.test_server_helpers import SUPERVISOR, Player, serving

    url = f"sqlite:///{tmp_path / 's.db'}"
    config = TableConfig("kauri", ONE_DECK, 30.0, 30.0, 100_000, lambda: seeded(7))
    seen: list[str] = []  # every state a player was sent, every round shown, before the reveal
    with serving(create_app(url, [config], SUPERVISOR)) as c:
        ana = Player(c, "kauri", "ana")
        assert ana.state["fairness"] == {"commitment": None, "revealed": []}
        assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
        s = ana.fresh()  # the round opened with the shuffle: committed before any card
        shown = s["fairness"]["commitment"]
        assert HEX.fullmatch(shown) and s["phase"] == "betting" and s["dealer"]["cards"] == []
        assert [e["kind"] for e in s["events"]] == ["rules", "shuffle", "burn", "wager", "stake"]
        assert s["events"][1]["detail"] == shown and "card" not in s["events"][2]
        seen.append(json.dumps(s))
        assert ana.send(type="deal")["type"] == "ok"
        seen.append(json.dumps(ana.fresh()))
        token = ana.token
    with serving(create_app(url, [config], SUPERVISOR)) as c:  # a restart, the round in play
        ana = Player(c, "kauri", "ana", token=token)
        reveal = None
        for _ in range(60):
            s = ana.fresh()
            if not s["fairness"]["revealed"]:
                seen.append(json.dumps(s))
            if s["phase"] not in ("over", "idle"):  # the round resumed: played out
                _decide(ana, s)
                continue
            if s["fairness"]["revealed"]:
                reveal = s["fairness"]["revealed"][0]
                break
            for r in c.get("/api/tables/kauri/history").json():  # each round, played out
                seen.append(json.dumps(c.get(f"/api/rounds/{r['id']}").json()))
            s = _server_round(ana)
        assert reveal is not None and reveal["commitment"] == shown
        doc = c.get(f"/api/tables/kauri/shoes/{reveal['seq']}").json()
        assert doc["commitment"] == shown and doc["problems"] == []
        assert commitment_of(doc["text"]) == shown
        order = doc["text"].split("\n")[3].split(" ")[1:]
        assert [x["card"] for x in doc["cards"]] == order[: len(doc["cards"])]
        assert doc["cards"][0]["kind"] == "burn"
        salt = doc["text"].split("\n")[1].removeprefix("salt ")
        assert not [t for t in seen if salt in t]  # nothing of it shown before
        assert not any(doc["text"] in text or '"salt"' in text for text in seen)
        assert _verdict(doc).startswith("ok: the shoe revealed at event")
        other = "KC" if doc["cards"][3]["card"] != "KC" else "QC"
        bad = dict(doc, cards=[*doc["cards"][:3], dict(doc["cards"][3], card=other)])
        assert _verdict(bad) == (
            f"WRONG: card 4 of the shoe is {order[3]}, but event {doc['cards'][3]['seq']} "
            f"shows {other} leaving it"
        )
        forged = dict(doc, text=doc["text"].replace(salt, "0" * 64))
        assert _verdict(forged).startswith("WRONG: the revealed shoe hashes to")
        assert c.get("/api/tables/kauri/shoes/1").status_code == 404
    with Store(url) as store:
        assert check("kauri", chain_of(store, "kauri")) == []
    assert main(["verify", "--db", url]) == 0


@pytest.mark.integration
def test_the_pit_boss_closing_the_table_reveals_its_shoe_and_it_shuffles_anew(
    tmp_path: Path,
) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("argon2")
    from pontoon.store.accounts import Role
    from tests.test_accounts import (
        PASSWORD,
        Socket,
        _app,
        _people,
        _play_out,
        deposit,
        login,
        register,
    )
    from tests.test_server_helpers import serving

    db = tmp_path / "a.db"
    people = _people(db)
    people.create("tama", PASSWORD, Role.CASHIER)
    people.create("pita", PASSWORD, Role.PITBOSS)
    people.store.close()
    url = f"sqlite:///{db}"

    def reveals() -> Chain:
        with Store(url) as store:
            return [c for c in chain_of(store, "kauri") if c[2].kind == "disclose"]

    with serving(_app(db)) as client:
        pit = login(client, "pita")
        ana = register(client, "ana")
        deposit(client, "ana", 50_000, "r1")
        assert client.post("/api/tables/kauri/join", headers=ana).status_code == 200
        sock = Socket(client, ana)
        assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
        shown = sock.state["fairness"]["commitment"]
        assert sock.send(type="deal")["type"] == "ok"
        closed = client.post("/api/pit/tables/kauri", json={"open": False}, headers=pit)
        assert closed.status_code == 200
        assert reveals() == []  # the round in play ends first: its cards are still out
        _play_out(sock)
        sock.send(type="state")
        after = sock.state["fairness"]
        assert after["commitment"] is None and after["revealed"][-1]["commitment"] == shown
        ((seq, rid, e),) = reveals()
        assert rid is None and e.by == "pitboss" and commitment_of(e.detail or "") == shown
        doc = client.get(f"/api/tables/kauri/shoes/{seq}").json()
        assert doc["problems"] == [] and doc["round"] is None and len(doc["cards"]) >= 4
        client.post("/api/pit/tables/kauri", json={"open": True}, headers=pit)
        assert sock.send(type="bet", box=1, amount=1000)["type"] == "ok"
        again = sock.state
        assert again["fairness"]["commitment"] not in (None, shown)
        shuffled = [e for e in again["events"] if e["kind"] in ("shuffle", "disclose")]
        assert [(e["kind"], e["rule"]) for e in shuffled] == [("shuffle", "7")]  # no reveal
        sock.ws.close()
    with Store(url) as store:
        assert check("kauri", chain_of(store, "kauri")) == []


@pytest.mark.integration
def test_a_shoe_revealed_in_a_round_still_in_play_is_not_shown_until_it_is_over(
    tmp_path: Path,
) -> None:
    """The shoe ran out mid-round (16.7): the old shoe is revealed at once in the record, but
    its text may hold a hole card still face down; the check waits for the round's end."""
    pytest.importorskip("fastapi")
    from pontoon.server.app import create_app
    from pontoon.server.table import TableConfig
    from tests.test_server_helpers import SUPERVISOR, serving

    url = f"sqlite:///{tmp_path / 'o.db'}"
    rules = load_rules("nz-pontoon", {"decks": 1, "penetration": 1.0, "boxes_per_player": 1})
    shoe = Shoe(rules, seeded(9))
    with Store(url) as store:
        log = TableLog(store, "kauri", top_up=True)
        for _ in range(40):
            rnd = Round(rules, shoe)
            rl = log.start(rnd)
            for b in range(1, 8):
                rnd.place_wager(b, f"p{b}", 1000)
            rnd.deal()
            rl.commit(shoe)
            while not rnd.over and not any(e.kind == "disclose" for e in rnd.events):
                cur = rnd.current()
                moves = rnd.legal_moves()
                hits = [m for m in moves if m.action == "hit"]
                rnd.apply(hits[0] if hits and cur is not None else moves[0])
                rl.commit(shoe)
            if not rnd.over:
                break
        assert not rnd.over
        seq = next(s for s, _, e in chain_of(store, "kauri") if e.kind == "disclose")
    config = TableConfig("kauri", rules, 30.0, 30.0, 100_000)
    with serving(create_app(url, [config], SUPERVISOR)) as c:  # the round resumed, in play
        r = c.get(f"/api/tables/kauri/shoes/{seq}")
        assert r.status_code == 409 and "in play" in r.json()["detail"]


@pytest.mark.integration
def test_a_table_that_restarts_closed_reveals_a_shoe_its_close_did_not(tmp_path: Path) -> None:
    """The close was recorded, and the process stopped before the shoe was revealed."""
    pytest.importorskip("fastapi")
    pytest.importorskip("argon2")
    from pontoon.server.app import create_app
    from pontoon.server.table import TableConfig
    from pontoon.store.accounts import Accounts, Role, hasher
    from pontoon.store.table_settings import record
    from tests.test_server_helpers import SUPERVISOR, Player, serving

    url = f"sqlite:///{tmp_path / 'c.db'}"
    config = TableConfig("kauri", ONE_DECK, 30.0, 30.0, 100_000, lambda: seeded(3))
    with serving(create_app(url, [config], SUPERVISOR)) as c:
        shown = _server_round(Player(c, "kauri", "ana"))["fairness"]["commitment"]
    people = Accounts(Store(url), hasher("minimum"))
    people.create("pita", "a long enough password", Role.PITBOSS)
    record(people.store, "pita", "pitboss", "kauri", "close")
    people.store.close()
    with serving(create_app(url, [config], SUPERVISOR)) as c:
        fairness = c.get("/api/tables/kauri/state").json()["fairness"]
        assert fairness["commitment"] is None and fairness["revealed"][-1]["commitment"] == shown
    with Store(url) as store:
        chain = chain_of(store, "kauri")
    assert [e.kind for _, _, e in chain].count("disclose") == 1
    assert check("kauri", chain) == []


def test_a_stored_shoe_of_other_rules_is_revealed_not_dealt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for decks in ("1", "2"):  # the same table, its rule set changed in between
        monkeypatch.setattr(sys, "stdin", io.StringIO("\ns\nh\n" * 10))
        assert (
            main(["play", "--seed", "2", "--set", f"decks={decks}", "--rounds", "2", "--db", db])
            == 0
        )
    assert "it is revealed, not dealt from" in capsys.readouterr().out
    with Store(db) as store:
        chain = chain_of(store, "terminal")
    first = next(e for _, _, e in chain if e.kind == "shuffle")
    ((_, rid, reveal),) = [c for c in chain if c[2].kind == "disclose"]
    assert rid is None and commitment_of(reveal.detail or "") == first.detail
    assert len(read_shoe_text(reveal.detail or "").cards) == 48  # the one-deck shoe
    assert check("terminal", chain) == []
