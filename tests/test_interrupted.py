"""The interrupted-round policy (``interrupted``, assumed; docs/operators/deploying.md): a round
in which nothing has been recorded for ``interrupted_minutes`` — its seated player gone, or the
table back from a failure too late — is resumed (the default: 16.5, 16.6 as before), voided
(16.5) or completed by the optimal chart, recorded with the reason; the store verifies and
replays such rounds. Time is an injected clock moved on by minutes, never waited for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from pontoon.analysis.chart import Chart
from pontoon.cli import main
from pontoon.errors import IllegalAction, InputError
from pontoon.events import Event
from pontoon.irregularities import Irregularity
from pontoon.replay import move_of, replay
from pontoon.round import Round
from pontoon.rules import RuleSet, load_rules, rules_from_dict, rules_json
from pontoon.server.app import create_app
from pontoon.server.protocol import Act, Bet
from pontoon.server.table import Session, Table, TableConfig
from pontoon.shoe import Shoe, seeded
from pontoon.sim.reference import chart_move
from pontoon.store.db import Store
from pontoon.store.group import GroupWriter
from pontoon.store.show import event_text
from pontoon.store.verify import verify
from pontoon.vocab import HAND_ACTIONS, Procedure, Role
from tests.helpers import wait_until
from tests.test_server_helpers import SUPERVISOR, Player, serving, stacked

# burn, box 1, box 2, dealer, box 1, box 2: ana (box 1) 8-8 with ben behind, cat (box 2) 5-6,
# the dealer an ace (insurance open); then the play's cards
THREE = ["4D", "8S", "5C", "AS", "8H", "6D", "7C", "KD", "9H", "9C", "6S", "2C"]
# burn, box 1, dealer, box 1: ana alone, 14 against a 7 (a decision, nothing forced)
ONE = ["4D", "9S", "7H", "5C", "KD", "3H", "2S", "9C"]
CHART = Chart.initial()


class Clock:
    """The wall clock moved on by the test: comparable with the store's event times."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, minutes: float) -> None:
        self.offset += 60.0 * minutes


class Watcher:
    """A connected client (the table only queues for it)."""

    def __init__(self, name: str) -> None:
        self.session = Session("t-" + name, name, "player", "kauri")

    def post_state(self, text: str) -> None:
        pass

    def post(self, message: dict[str, Any]) -> None:
        pass

    def close(self, code: int, message: dict[str, Any] | None = None) -> None:
        pass


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


def _rules(policy: str, minutes: int = 10) -> RuleSet:
    return load_rules("nz-pontoon", {"interrupted": policy, "interrupted_minutes": minutes})


def _table(
    store: Store,
    rules: RuleSet,
    clock: Clock,
    cards: list[str],
    chart: Callable[[RuleSet], Chart] | None = lambda r: CHART,
) -> Table:
    config = TableConfig("kauri", rules, 30.0, 30.0, 100_000, stacked(cards), clock=clock)
    config.chart = chart
    return Table(config, store, GroupWriter(store))


async def _seat(table: Table, bets: list[tuple[str, int, int]]) -> dict[str, Session]:
    """Each (player, box, amount) joins and wagers; the round is dealt; all committed."""
    sessions: dict[str, Session] = {}
    for name, box, amount in bets:
        if name not in sessions:
            await table.join(name, "t-" + name)
            sessions[name] = Session("t-" + name, name, "player", "kauri")
        table.bet(sessions[name], Bet(type="bet", box=box, amount=amount))
        await table.commit()
    table.deal(sessions[bets[0][0]])
    await table.commit()
    return sessions


async def _fire(table: Table) -> None:
    """What the table's timer does when it runs out (for the version it was set for)."""
    await table.expire(table.version)


async def _timer_done(table: Table) -> None:
    """Wait until the timer has fired and its write is committed (30 s at most: a loaded
    host's store; the round not over by then fails here)."""
    deadline = time.monotonic() + 30
    while True:
        await asyncio.sleep(0.01)  # (the poll's interval)
        rl = table.roundlog
        if rl is not None and rl.round.over and not rl.pending and not table.timer.tasks:
            return
        assert time.monotonic() < deadline, "the timer's write was not committed within 30 s"


def _events(url: str) -> list[list[Event]]:
    """Every round's log, in order."""
    with Store(url) as store:
        out = []
        rid = 1
        while True:
            got = store.round_events(rid)
            if not got:
                return out
            out.append([s["event"] for s in got])
            rid += 1


def _check_store(url: str) -> list[Event]:
    """The store verifies, and the last round's log replays to itself (8.6)."""
    with Store(url) as store:
        report = verify(store)
    assert report.ok, report.problems
    events = _events(url)[-1]
    assert replay(events).events == events
    return events


def _policy_events(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "irregularity" and e.by == Role.POLICY]


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'interrupted.db'}"


@pytest.fixture
def clock() -> Clock:
    return Clock()


# ---------------------------------------------------------------------- the knob
def test_the_knob_defaults_to_resume_and_is_written_only_when_set() -> None:
    rules = load_rules("nz-pontoon")
    assert (rules.interrupted, rules.interrupted_minutes) == ("resume", 10)
    assert "interrupted" not in rules_json(rules)  # logs and shoes as written before it
    data = rules.to_dict()
    assert data["interrupted"] == "resume" and data["interrupted_minutes"] == 10
    old = {k: v for k, v in data.items() if not k.startswith("interrupted")}
    assert rules_from_dict(old) == rules  # a log recorded before the knob reads as resume
    void = _rules("void", 3)
    assert rules_from_dict(void.to_dict()) == void
    assert '"interrupted":"void"' in rules_json(void)


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"interrupted": "later"}, "knob 'interrupted' must be one of resume, void, complete"),
        ({"interrupted_minutes": "0"}, "knob 'interrupted_minutes' must be between 1 and 1440"),
        ({"interrupted_minutes": "1441"}, "knob 'interrupted_minutes' must be between 1 and"),
        ({"interrupted_minutes": "ten"}, "knob 'interrupted_minutes' needs a whole-number value"),
    ],
)
def test_bad_knob_values_are_refused_in_one_line(
    knobs: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(InputError, match=message) as exc:
        load_rules("nz-pontoon", knobs)
    assert "\n" not in str(exc.value)
    (key, value), *_ = knobs.items()
    assert main(["rules", "nz-pontoon", "--set", f"{key}={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_pontoon_rules_names_the_knobs_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "nz-pontoon", "--set", "interrupted=complete"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("interrupted "))
    assert "complete" in line and "rule 16.5 (assumed)" in line
    assert "interrupted_minutes" in out


# ---------------------------------------------------------------------- the engine
def _dealt(rules: RuleSet) -> Round:
    rnd = Round(rules, Shoe(rules, seeded(5)))
    rnd.place_wager(1, "ana", 1000)
    rnd.deal()
    assert not rnd.over
    return rnd


def test_the_policys_procedures_are_the_policys_alone() -> None:
    """Refused, naming the rule: by a person, under ``resume``, before the deal, on a box,
    after the round, twice; and the policy applies no procedure of the rule book."""
    op = Irregularity(Procedure.ABANDONED, by=Role.POLICY)
    rules = _rules("void")
    betting = Round(rules, Shoe(rules, seeded(5)))
    betting.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match="cards have not been dealt"):
        betting.apply_irregularity(op)
    rnd = _dealt(rules)
    for bad, reason in [
        (Irregularity(Procedure.ABANDONED, by=Role.SUPERVISOR), "not a person"),
        (Irregularity(Procedure.FAILURE, by=Role.POLICY, box=1), "the whole round"),
        (Irregularity(Procedure.VOID, by=Role.POLICY), "dealer or a supervisor"),
    ]:
        n = len(rnd.events)
        with pytest.raises(IllegalAction, match=reason) as exc:
            rnd.apply_irregularity(bad)
        assert exc.value.rule and len(rnd.events) == n  # nothing changed
    with pytest.raises(IllegalAction, match=r"interrupted = resume") as exc:
        _dealt(load_rules("nz-pontoon")).apply_irregularity(op)
    assert exc.value.rule == "16.5 (assumed)"
    rnd.apply_irregularity(op)
    assert rnd.over and rnd.net("ana") == 0
    with pytest.raises(IllegalAction, match="the round is over"):
        rnd.apply_irregularity(op)
    complete = _dealt(_rules("complete"))
    complete.apply_irregularity(op)  # the policy decides from now on: the round goes on
    assert not complete.over and complete.decided_by == Role.POLICY
    with pytest.raises(IllegalAction, match="already taken the round over"):
        complete.apply_irregularity(Irregularity(Procedure.FAILURE, by=Role.POLICY))
    assert replay(complete.events).decided_by == Role.POLICY


# ---------------------------------------------------------------------- resume (as before)
def test_resume_an_absent_player_is_still_drawn_to_12_by_the_timer(url: str, clock: Clock) -> None:
    """interrupted = resume (the default): the turn timer applies 16.6 to a player gone
    however long, and nothing of the policy is recorded."""

    async def go() -> None:
        with Store(url) as store:
            table = _table(store, load_rules("nz-pontoon"), clock, ONE)
            await _seat(table, [("ana", 1, 1000)])
            clock.advance(60)
            assert table.timer.interrupted_at() is None and table.timer.interruption() is None
            await _fire(table)
            assert table.round is not None and table.round.over

    run(go())
    events = _check_store(url)
    assert any(e.kind == "irregularity" and e.rule == "16.6" for e in events)
    assert not _policy_events(events)


def test_resume_a_late_restart_resumes_the_round(url: str, clock: Clock) -> None:
    async def go() -> None:
        with Store(url) as store:
            await _seat(_table(store, load_rules("nz-pontoon"), clock, ONE), [("ana", 1, 1000)])
        clock.advance(120)
        with Store(url) as store:  # the server comes back two hours later
            table = _table(store, load_rules("nz-pontoon"), clock, ["4D"])
            assert table.round is not None and table.round.phase == "playing"
            assert table.timer.interruption() is None and not table.timer.late

    run(go())
    assert not _policy_events(_check_store(url))


# ---------------------------------------------------------------------- void
def test_void_an_abandoned_round_after_the_time_and_not_before(url: str, clock: Clock) -> None:
    """interrupted = void: the seated player has no socket, so the turn timer does not draw
    the hand (16.6) but waits; 9 minutes on, the round stands; past 10 it is void, every
    wager back, recorded as the policy's ``interrupted-abandoned``."""

    async def go() -> None:
        with Store(url) as store:
            table = _table(store, _rules("void"), clock, THREE)
            await _seat(table, [("ana", 1, 1000), ("ben", 1, 500), ("cat", 2, 2000)])
            rnd = table.round
            assert rnd is not None
            before = len(rnd.events)
            await _fire(table)  # the turn timer: nobody connected, nothing happens
            clock.advance(9)
            await _fire(table)
            assert len(rnd.events) == before and not rnd.over
            assert table.timer.interruption() is None
            clock.advance(1.01)
            assert table.timer.interruption() == "abandoned"
            await _fire(table)
            assert rnd.over
            assert {p: table.balance(p) for p in ("ana", "ben", "cat")} == dict.fromkeys(
                ("ana", "ben", "cat"), 100_000
            )
            assert any("interrupted (abandoned): void" in n for n in table.notes)

    run(go())
    events = _check_store(url)
    (policy,) = _policy_events(events)
    assert policy.detail == "interrupted-abandoned"
    assert policy.rule == "16.5 (assumed: interrupted=void)"
    assert "a decision awaited too long" in event_text(policy)
    assert all(e.detail == "void" for e in events if e.kind == "outcome")
    assert not any(e.kind == "irregularity" and e.rule == "16.6" for e in events)


def test_void_a_connected_slow_player_still_gets_the_turn_timer(url: str, clock: Clock) -> None:
    """Ordinary slowness is the turn timer's (16.6), whatever the policy."""

    async def go() -> None:
        with Store(url) as store:
            table = _table(store, _rules("void"), clock, ONE)
            await _seat(table, [("ana", 1, 1000)])
            table.clients.add(Watcher("ana"))
            await _fire(table)
            assert table.round is not None and table.round.over

    run(go())
    events = _check_store(url)
    assert any(e.kind == "irregularity" and e.rule == "16.6" for e in events)
    assert not _policy_events(events)


def test_void_after_a_failure_and_a_late_restart(url: str, clock: Clock) -> None:
    """The server dies mid-round; it comes back 11 minutes after the round's last recorded
    event (the store's time): the round is void at once, recorded ``interrupted-failure``."""

    async def go() -> None:
        with Store(url) as store:
            await _seat(_table(store, _rules("void"), clock, ONE), [("ana", 1, 1000)])
        clock.advance(11)
        with Store(url) as store:
            table = _table(store, _rules("void"), clock, ["4D"])
            assert table.timer.late and table.timer.interruption() == "failure"
            table.arm_timer()  # as the server does when it starts: due now
            assert table.deadline is not None and table.deadline <= time.monotonic()
            await _timer_done(table)
            assert table.round is not None and table.round.over
            assert table.balance("ana") == 100_000
            table.close()

    run(go())
    (policy,) = _policy_events(_check_store(url))
    assert policy.detail == "interrupted-failure"


def test_a_restart_within_the_time_resumes_the_round(url: str, clock: Clock) -> None:
    """Back 9 minutes after the last event: resumed; the player plays on, and the policy's
    clock starts again from the new event."""

    async def go() -> None:
        with Store(url) as store:
            await _seat(_table(store, _rules("void"), clock, ONE), [("ana", 1, 1000)])
        clock.advance(9)
        with Store(url) as store:
            table = _table(store, _rules("void"), clock, ["4D"])
            assert not table.timer.late and table.timer.interruption() is None
            rnd = table.round
            assert rnd is not None and rnd.phase == "playing"
            clock.advance(2)  # now it is too late: but nobody is gone, a failure was not
            assert table.timer.interruption() == "abandoned"
            table.clients.add(Watcher("ana"))
            table.act(
                Session("t-ana", "ana", "player", "kauri"), Act(type="act", action="stand", box=1)
            )
            await table.commit()
            assert rnd.over and table.timer.interruption() is None

    run(go())
    assert not _policy_events(_check_store(url))


# ---------------------------------------------------------------------- complete
def _chart_moves_check(events: list[Event], chart: Chart) -> int:
    """Every seated player's move after the policy took over is the chart's move for the
    hand then in turn (rebuilt from the log up to it); returns how many there were."""
    start = next(i for i, e in enumerate(events) if e.kind == "irregularity" and e.by == "policy")
    seen = 0
    for i in range(start + 1, len(events)):
        e = events[i]
        move = move_of(e)
        if move is None:
            continue
        assert e.by == "policy", e  # every move from then on says who made it
        before = replay(events[:i])
        turn = before.to_act()
        hand_move = move.action in HAND_ACTIONS and e.player in (turn.players if turn else ())
        if turn is not None and turn.kind == "decide" and hand_move:
            wanted = chart_move(before, chart)
            assert (wanted.action, wanted.box) == (move.action, move.box), e
            seen += 1
    return seen


def test_complete_an_abandoned_round_by_the_chart(url: str, clock: Clock) -> None:
    """interrupted = complete: past the time, insurance is declined, the seated players'
    hands are played by the chart, the player behind takes the default (15.3), the dealer
    completes and the round settles; each move is recorded ``by: policy``."""

    async def go() -> None:
        with Store(url) as store:
            table = _table(store, _rules("complete", 1), clock, THREE)
            await _seat(table, [("ana", 1, 1000), ("ben", 1, 500), ("cat", 2, 2000)])
            clock.advance(1.5)
            await _fire(table)
            rnd = table.round
            assert rnd is not None and rnd.over

    run(go())
    events = _check_store(url)
    (policy,) = _policy_events(events)
    assert (policy.detail, policy.rule) == (
        "interrupted-abandoned",
        "16.6 (assumed: interrupted=complete)",
    )
    declined = [e.player for e in events if e.kind == "action" and e.detail == "no-insurance"]
    assert sorted(p for p in declined if p) == ["ana", "ben", "cat"]
    assert _chart_moves_check(events, CHART) >= 2
    assert any(e.kind == "action" and e.detail == "decline" for e in events)  # ben, 15.3(e)
    assert any(e.kind == "end" for e in events)
    text = [event_text(e) for e in events if e.kind == "action" and e.by]
    assert text and all(t.endswith("(by the policy)") for t in text)


def test_complete_after_a_failure_with_the_optimal_chart_worked_out(
    url: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table given no chart works out the optimal one (once, on a thread) when the policy
    first needs it; here through :meth:`Table.reload`, as after a failed write."""
    asked: list[RuleSet] = []

    def optimal(rules: RuleSet) -> Chart:
        asked.append(rules)
        return CHART

    monkeypatch.setattr("pontoon.server.table_timer.optimal_chart", optimal)

    async def go() -> None:
        with Store(url) as store:
            table = _table(store, _rules("complete"), clock, ONE, chart=None)
            await _seat(table, [("ana", 1, 1000)])
            clock.advance(30)
            async with table.lock:
                table.reload()  # the table taken back from the store: late, a failure
                assert table.timer.late and table.timer.interruption() == "failure"
            await _timer_done(table)
            assert table.round is not None and table.round.over
            table.close()

    run(go())
    assert [r.interrupted for r in asked] == ["complete"]
    events = _check_store(url)
    (policy,) = _policy_events(events)
    assert policy.detail == "interrupted-failure"
    assert _chart_moves_check(events, CHART) >= 1


# ---------------------------------------------------------------------- the server
@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, Clock, Path]]:
    db = tmp_path / "server.db"
    clock = Clock()
    config = TableConfig(
        "kauri", _rules("void"), 0.2, 30.0, 100_000, stacked(ONE), clock=clock, chart=None
    )
    with serving(create_app(f"sqlite:///{db}", [config], SUPERVISOR)) as client:
        yield client, clock, db


@pytest.mark.integration
def test_server_a_player_who_goes_away_has_the_round_voided(
    served: tuple[Any, Clock, Path],
) -> None:
    """Over WebSockets: ana bets and closes her socket, and the supervisor deals (once the
    server has seen her go: the timer is not raced); the 0.2 s turn timer does not draw her
    hand but waits; once the clock passes 10 minutes the round is void."""
    client, clock, db = served
    ana = Player(client, "kauri", "ana")
    assert ana.send(type="bet", box=1, amount=1000)["type"] == "ok"
    ana.close()
    sup = Player(client, "kauri", None, token=SUPERVISOR)
    wait_until(lambda: not sup.fresh()["players"]["ana"]["connected"], 30, "ana seen to go")
    assert sup.send(type="deal")["type"] == "ok"
    time.sleep(0.5)  # the clock under test: two turns of the timer, and nothing happens
    assert sup.fresh()["phase"] == "playing"
    clock.advance(10.5)
    s = wait_until(lambda: (t := sup.fresh())["phase"] == "over" and t, 30, "the round over")
    assert any("interrupted (a decision awaited too long)" in e["text"] for e in s["events"])
    assert s["balances"]["ana"] == 100_000
    sup.close()
    assert main(["verify", "--db", f"sqlite:///{db}"]) == 0
