"""The strategy drill (pontoon/train/): each decision graded by the exact analysis of that very
hand, the cost of a mistake the difference of the two plays' expected values, the weak cells
brought back by the schedule, the modes, the scripted command and its refusals."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pontoon.analysis.report import hand_values
from pontoon.cards import pack
from pontoon.cli import main
from pontoon.hand import is_pair, is_soft
from pontoon.rules import RuleSet, load_rules
from pontoon.scenario import load_scenario, play_scenario, result_document
from pontoon.sim.counting import Counting
from pontoon.train.count import CountDrill
from pontoon.train.dealer import WHAT, asks_of, grade_answer
from pontoon.train.strategy import Decision, Drill, Question
from tests.test_store import BACKENDS, fresh_database

CLASSIC1 = load_rules("classic-blackjack", {"decks": 1})


def drill(rules: RuleSet, mode: str, seed: int, play: Callable[[Drill, Question], str]) -> Drill:
    """A drill whose learner answers by ``play`` (told nothing but the question)."""
    d: Drill

    def ask(q: Question) -> str:
        return play(d, q)

    d = Drill(rules, mode, seed, ask, lambda _: None)
    return d


def best(d: Drill, q: Question) -> str:
    values = {a: v for a, v in d.grader.values(q.cards, q.up, q.doubled).items() if a in q.legal}
    return max(values, key=values.__getitem__)


def test_the_cost_of_a_mistake_is_the_difference_of_the_two_plays_values() -> None:
    """Every decision's cost is the hand calculator's EV of the best play less that of the
    play made (`pontoon analyze --hand`), and the best is the highest of them."""
    d = drill(CLASSIC1, "all", 5, lambda _, q: "stand" if "stand" in q.legal else q.legal[0])
    d.run(12)
    assert len(d.decisions) == 12
    wrong = 0
    for dec in d.decisions:
        hand = ",".join(c.code for c in dec.cards)
        values = hand_values(CLASSIC1, hand, dec.up.code).values
        g = dec.grade
        assert g.best == max(values, key=values.__getitem__)
        assert g.cost == pytest.approx(values[g.best] - values[g.answer], abs=1e-12)
        assert g.correct == (g.answer == g.best)
        wrong += not g.correct
    assert wrong > 0  # standing on everything is wrong somewhere in 12 decisions


def test_10_an_insurance_offer_is_graded_by_the_shoes_ten_values_less_those_seen() -> None:
    """10: where insurance is offered beside the hand's plays (nz-pontoon), a learner who
    insures is graded on the offer alone — insuring the most allowed against declining,
    from the ten-values left after the cards seen —, and a play made while it is open is
    graded among the plays. (Before, either answer ended the drill with a KeyError.)"""
    rules = load_rules("nz-pontoon")
    answers = iter(["insure", "no-insurance"] * 50)

    def play(_: Drill, q: Question) -> str:
        return next(answers) if "insure" in q.legal else q.legal[0]

    for seed in range(12):
        d = drill(rules, "all", seed, play)
        d.run(20)
        offers = [dec for dec in d.decisions if dec.grade.answer in ("insure", "no-insurance")]
        for dec in offers:
            seen = [*dec.cards, dec.up]
            shoe = pack(rules.deck, rules.decks)
            tens = sum(c.value == 10 for c in shoe) - sum(c.value == 10 for c in seen)
            p = tens / (len(shoe) - len(seen))
            insure = float(rules.insurance_max) * (float(rules.insurance_pays) * p - (1 - p))
            assert dec.up.value == 1
            assert dec.grade.values == {"insure": pytest.approx(insure), "no-insurance": 0.0}
            assert dec.grade.best == ("insure" if insure > 0 else "no-insurance")
        if offers:
            break
    assert offers, "no insurance offered in 12 drills"


def test_11_1_13_hands_kept_under_one_key_have_the_same_values() -> None:
    """The grader keeps a hand's values under :meth:`Grader.key`: hands under one key have
    the same values, worked out apart (hearts, diamonds and clubs renamed, the suits of cards
    that cannot make a 6-7-8 or 7-7-7 dropped, 11.1); spades, which pay apart, and a pair
    that may split against two cards that may not (13: by rank in nz-pontoon) have keys of
    their own. (Before, a jack and a queen kept under a king pair's key lost or gained the
    split.)"""
    from pontoon.cards import parse_cards
    from pontoon.train.grade import Grader

    rules = load_rules("nz-pontoon")
    g = Grader(rules)

    def values(hand: str, up: str) -> dict[str, float]:
        return dict(hand_values(rules, hand.replace(" ", ","), up).values)

    def key(hand: str, up: str) -> tuple[str, str, bool]:
        return g.key(parse_cards(hand), parse_cards(up)[0])

    alike = [("7H 8D", "6C", "7D 8C", "6H"), ("7C 7C", "7D", "7H 7H", "7C")]
    alike += [("JH 6D", "7C", "KS 6S", "7H")]
    for a, ua, b, ub in alike:
        assert key(a, ua) == key(b, ub)
        va, vb = values(a, ua), values(b, ub)
        assert va.keys() == vb.keys() and all(abs(va[x] - vb[x]) < 1e-12 for x in va)
    assert key("7S 8S", "6S") != key("7H 8H", "6H")
    assert values("7S 8S", "6S")["hit"] > values("7H 8H", "6H")["hit"]  # (spades pay more)
    assert key("KH KD", "5C") != key("JH QD", "5C")
    king, jack = parse_cards("KH KD"), parse_cards("JH QD")
    five = parse_cards("5C")[0]
    assert "split" not in g.values(jack, five) and "split" in g.values(king, five)


@pytest.mark.slow
def test_a_learner_who_misses_one_row_sees_it_more_often() -> None:
    """A scripted learner who plays every decision right but hard 12-16, which it always
    stands on when hitting is best: in the weak-cells mode those cells come back on the
    schedule, far more often than the shoe deals them."""

    def misses(d: Drill, q: Question) -> str:
        right = best(d, q)
        weak = not q.doubled and not is_soft(list(q.cards)) and 12 <= d_total(q) <= 16
        return "stand" if weak and right == "hit" else right

    share = {}
    for mode in ("all", "weak"):
        d = drill(CLASSIC1, mode, 7, misses)
        d.run(60)
        missed = [dec for dec in d.decisions if not dec.grade.correct]
        share[mode] = len(missed) / len(d.decisions)
    assert share["weak"] > 2.5 * share["all"] and share["weak"] > 0.3, share


def d_total(q: Question) -> int:
    from pontoon.hand import total

    return total(list(q.cards))


def pair(d: Decision) -> bool:
    return len(d.cards) == 2 and is_pair(d.cards[0], d.cards[1], "value")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "mode", "check"),
    [
        (CLASSIC1, "pairs", lambda d: pair(d) and "split" in d.grade.values),
        (CLASSIC1, "soft", lambda d: is_soft(d.cards) and not pair(d)),
        (CLASSIC1, "hard", lambda d: not is_soft(d.cards) and not pair(d)),
        (load_rules("nz-pontoon"), "surrender", lambda d: "surrender" in d.grade.values),
        (
            load_rules("spanish-21", {"decks": 2}),
            "rescue",
            lambda d: d.grade.cell.startswith("X") and set(d.grade.values) == {"stand", "rescue"},
        ),
    ],
    ids=["pairs", "soft", "hard", "surrender", "rescue-12"],
)
def test_each_mode_asks_only_its_decisions(
    rules: RuleSet, mode: str, check: Callable[[Decision], bool]
) -> None:
    d = drill(rules, mode, 3, best)
    d.run(4)
    assert len(d.decisions) == 4
    for dec in d.decisions:
        assert check(dec), dec
        assert dec.grade.correct  # the learner plays the best


def test_a_composed_hand_leaves_the_shoe_whole() -> None:
    """The weak-cells mode lays out cards composed for a cell; the shoe's own cards stay the
    pack (none added to its discards, none lost)."""
    d = drill(CLASSIC1, "weak", 11, lambda d, q: "stand" if "stand" in q.legal else q.legal[0])
    d.run(30)
    held = sorted(c.code for c in [*d.shoe._cards, *d.shoe.discards])
    assert held == sorted(c.code for c in pack(CLASSIC1.deck, CLASSIC1.decks))


def run(
    args: list[str], text: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_scripted_drill_prints_its_json(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    args = ["train", "strategy", "--rules", "classic-blackjack", "--set", "decks=1"]
    code, out, _ = run(
        [*args, "--hands", "3", "--seed", "2", "--json"], "x\nh\ns\ns\ns\n", monkeypatch, capsys
    )
    assert code == 0
    doc = json.loads(out)
    assert len(doc["decisions"]) == 3
    for dec in doc["decisions"]:
        assert {"answer", "best", "correct", "cost"} <= set(dec)
        assert dec["correct"] == (dec["cost"] == 0)
    assert doc["accuracy"] == sum(d["correct"] for d in doc["decisions"]) / 3
    code, out, _ = run([*args, "--hands", "3", "--seed", "2"], "h\nq\n", monkeypatch, capsys)
    assert code == 0 and "1 decisions" in out  # q ends the drill with its summary


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mode", "bogus"], "unknown --mode 'bogus'"),
        (["--hands", "0"], "--hands must be at least 1"),
        (["--mode", "rescue"], "no rescue (12)"),
        (["--wager", "1"], "--wager must be"),
    ],
)
def test_bad_options_exit_2_with_one_line(
    extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run(
        ["train", "strategy", "--rules", "classic-blackjack", *extra], "", monkeypatch, capsys
    )
    assert code == 2 and message in err and err.count("\n") == 1, err


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as u:
        yield u


def test_a_learners_record_carries_the_weak_cells_to_the_next_session(
    store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    """Each graded decision is kept in the round store under the learner's name; the next
    session's weak-cells schedule is rebuilt from them; `train progress` shows (and plots)
    the sessions."""
    args = ["train", "strategy", "--rules", "classic-blackjack", "--set", "decks=1"]
    args += ["--learner", "ana", "--db", store, "--hands", "4", "--mode", "weak", "--json"]
    always_stand = "s\n" * 40
    code, out, _ = run([*args, "--seed", "1"], always_stand, monkeypatch, capsys)
    first = json.loads(out)
    assert code == 0 and first["weak_cells"]  # standing on everything misses somewhere
    code, out, _ = run([*args, "--seed", "2"], always_stand, monkeypatch, capsys)
    second = json.loads(out)
    weak = set(first["weak_cells"])
    assert {d["cell"] for d in second["decisions"]} & weak  # they came back
    png = tmp_path / "progress.png"
    prog = ["train", "progress", "--rules", "classic-blackjack", "--set", "decks=1", "--db", store]
    code, out, _ = run(
        [*prog, "--learner", "ana", "--output", str(png), "--json"], "", monkeypatch, capsys
    )
    sessions = json.loads(out)["sessions"]
    assert code == 0 and [s["decisions"] for s in sessions] == [4, 4]
    assert sessions[1]["accuracy"] == second["accuracy"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = run([*prog, "--learner", "nobody"], "", monkeypatch, capsys)
    assert code == 2 and "no strategy drill of 'nobody'" in err


# ---------------------------------------------------------------- the counting drill

HI_LO = {**dict.fromkeys("23456", 1), **dict.fromkeys("789", 0), **dict.fromkeys("TJQKA", -1)}


class Counter:
    """A scripted counter who keeps hi-lo from the cards it is shown (a shuffle restarts it),
    reads the rack to a tenth of a deck (the true count held to -10..+10), and is off by
    ``slip`` every ``every``-th running count."""

    def __init__(self, decks: int, deck_size: int, slip: int = 0, every: int = 0) -> None:
        self.running, self.decks, self.deck_size = 0, decks, deck_size
        self.slip, self.every, self.asked = slip, every, 0

    def say(self, text: str) -> None:
        if text.startswith("Shuffle"):
            self.running = 0

    def ask(self, prompt: str) -> int:
        if "true count" in prompt:
            rack = float(prompt.split("rack ")[1].split(" decks")[0])
            return min(max(math.floor(self.running / max(self.decks - rack, 0.5)), -10), 10)
        cards = prompt.split("   ")[0].split()
        self.running += sum(HI_LO[c[0]] for c in cards)
        self.asked += 1
        off = self.slip if self.every and self.asked % self.every == 0 else 0
        return self.running + off


@pytest.mark.parametrize("pace", ["1", "2", "round"])
def test_a_counter_who_keeps_hi_lo_is_graded_right(pace: str) -> None:
    """The running count is the tags' sum since the shuffle (kept independently here from the
    cards shown); the true count, the running count per deck left read from the rack, 48-card
    decks understood (nz-pontoon's Spanish shoe); a slip is graded wrong."""
    rules = load_rules("nz-pontoon", {"decks": 1, "penetration": 0.5})
    c = Counter(rules.decks, 48)
    d = CountDrill(rules, Counting.builtin("hi-lo"), pace, 4, c.ask, c.say)
    d.run(40)  # one deck cut at half: several shuffles
    assert len(d.answers) == 40 and all(a.correct for a in d.answers)
    assert any(a.true_answer is not None for a in d.answers)
    slips = Counter(rules.decks, 48, slip=1, every=5)
    d = CountDrill(rules, Counting.builtin("hi-lo"), pace, 4, slips.ask, slips.say)
    d.run(20)
    wrong = [k for k, a in enumerate(d.answers, start=1) if not a.correct]
    assert wrong == [5, 10, 15, 20]


def test_the_count_drill_json_and_refusals(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:  # type: ignore[no-untyped-def]
    args = ["train", "count", "--hands", "3", "--seed", "1", "--json"]
    code, out, _ = run(args, "x\n0\n0\n0\n0\n", monkeypatch, capsys)
    doc = json.loads(out)
    assert code == 0 and len(doc["decisions"]) == 3
    for dec in doc["decisions"]:
        assert {"answer", "best", "correct", "cost"} <= set(dec)
    assert "true_count" in doc["decisions"][2]  # every third
    tags = tmp_path / "tags.toml"  # tags alone: the drill bets nothing, so needs no ramp
    tags.write_text("tags = { A = -1, 2 = 1, 3 = 1, 4 = 2, 5 = 2, 6 = 2, 7 = 1, T = -2 }\n")
    code, out, _ = run([*args, "--count", str(tags)], "0\n" * 4, monkeypatch, capsys)
    assert code == 0 and json.loads(out)["count"] == "tags"
    for extra, message in (
        (["--pace", "3"], "unknown --pace '3'"),
        (["--count", "nowhere.toml"], "no counting system 'nowhere.toml'"),
        (["--hands", "0"], "--hands must be at least 1"),
    ):
        code, _, err = run(["train", "count", *extra], "", monkeypatch, capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err


# ---------------------------------------------------------------- the dealer drill

SCENARIOS = Path(__file__).parent / "data" / "scenarios"


def settled_scenarios() -> list[Path]:
    return [
        f
        for f in sorted(SCENARIOS.glob("*.json"))
        if "error" not in json.loads(f.read_text())["expect"]
    ]


@pytest.mark.parametrize("path", settled_scenarios(), ids=lambda p: p.stem)
def test_the_dealer_drills_answers_are_the_engines_settlements(path: Path) -> None:
    """For every scenario that settles: the drill asks each wager in layout order, and what
    it holds right is the engine's settlement (the round's document); a player's answers add
    up to the net the scenario was written to expect from the Gazette; a procedure asked is
    the one the engine applied."""
    data = load_scenario(path)
    doc = result_document(play_scenario(data))
    asks = asks_of(play_scenario(data))
    wagers = [a for a in asks if a.rule is None]
    expected = [
        w["net"]
        for box in doc["boxes"]
        for w in [
            *(w for h in box["hands"] for w in h["wagers"]),
            *box["insurance"],
            *box["super_sevens"],
        ]
    ]
    assert [a.cents for a in wagers][: len(expected)] == expected
    nets: dict[str, int] = {}
    for a in wagers:
        assert a.player is not None
        nets[a.player] = nets.get(a.player, 0) + a.cents
    assert nets == data["expect"]["net"]
    rules = [
        e["rule"] for e in doc["events"] if e["kind"] == "irregularity" and e["detail"] in WHAT
    ]
    assert [a.rule for a in asks if a.rule is not None] == rules
    for a in asks:  # the right answer is right, a wrong one wrong
        right = a.rule if a.rule is not None else f"{a.cents / 100:+.2f}"
        assert grade_answer(a, right)
        assert not grade_answer(a, "99.1" if a.rule is not None else f"{a.cents / 100 + 1:+.2f}")
        if a.odds is not None:
            odds = f"{a.odds.numerator}:{a.odds.denominator}"
            assert grade_answer(a, f"{odds} {right}") and not grade_answer(a, f"7:1 {right}")


def test_the_dealer_drill_command(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    one = SCENARIOS / "11_1_three_card_bonuses_678_suited_777_spades_777_mixed.json"
    args = ["train", "dealer", "--scenarios", str(one), "--json", "--hands", "2"]
    code, out, _ = run(args, "ten dollars\n0\n0\n", monkeypatch, capsys)
    doc = json.loads(out)
    assert code == 0 and len(doc["decisions"]) == 2  # a malformed amount is asked again
    assert {"answer", "best", "correct", "cost"} <= set(doc["decisions"][0])
    code, out, _ = run(
        ["train", "dealer", "--seed", "1", "--hands", "3"], "0\n0\n0\n", monkeypatch, capsys
    )
    assert code == 0 and "3 answers" in out
    for extra, message in (
        (["--scenarios", "nowhere.json"], "cannot read nowhere.json"),
        (["--hands", "0"], "--hands must be at least 1"),
    ):
        code, _, err = run(["train", "dealer", *extra], "", monkeypatch, capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_counting_and_dealer_drills_are_kept_too(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    db = f"sqlite:///{tmp_path / 'l.db'}"
    keep = ["--learner", "bo", "--db", db, "--seed", "1", "--json"]
    code, out, _ = run(
        ["train", "count", "--hands", "3", *keep], "0\n0\n0\n0\n", monkeypatch, capsys
    )
    counted = json.loads(out)
    code, out, _ = run(["train", "dealer", "--hands", "2", *keep], "0\n0\n", monkeypatch, capsys)
    dealt = json.loads(out)
    for drill, doc in (("count", counted), ("dealer", dealt)):
        args = ["train", "progress", "--drill", drill, "--learner", "bo", "--db", db, "--json"]
        code, out, _ = run(args, "", monkeypatch, capsys)
        (session,) = json.loads(out)["sessions"]
        assert code == 0 and session["decisions"] == len(doc["decisions"])
        assert session["accuracy"] == doc["accuracy"]
    code, _, err = run(
        ["train", "progress", "--drill", "poker", "--learner", "bo"], "", monkeypatch, capsys
    )
    assert code == 2 and "unknown --drill 'poker'" in err


def test_the_servers_drills_share_one_grader_a_rule_set_and_its_cache_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server's worker grades every drill of a rule set with one grader (its chart and
    hands' values worked out once), whose cache of hands is bounded."""
    from pontoon.cards import parse_cards
    from pontoon.server import train as worker
    from pontoon.train import grade

    worker._begin("drill-a", "classic-blackjack", "all", 1, 3, None, [])
    worker._begin("drill-b", "classic-blackjack", "all", 2, 3, None, [])
    worker._begin("drill-c", "spanish-21", "all", 3, 3, None, [])
    held = worker._HELD
    assert held["drill-a"].drill.grader is held["drill-b"].drill.grader
    assert held["drill-a"].drill.grader is not held["drill-c"].drill.grader
    worker._forget(["drill-a", "drill-b", "drill-c"])
    monkeypatch.setattr(grade, "CACHED_MOST", 2)
    g = grade.Grader(CLASSIC1)
    up = parse_cards("TS")[0]
    for hand in ("9H 7D", "9H 8D", "9H 6D"):
        g.values(parse_cards(hand), up)
        assert len(g._cache) <= 2
