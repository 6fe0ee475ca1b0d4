"""The kernel against the round engine, round by round: the same shoes (the kernel's
shuffles replayed by a real :class:`pontoon.shoe.Shoe`, burn card, cutting card, 8.7/8.8 and
16.7 reshuffles included), the same chart, each box's net compared in cents. Over 100,000
rounds across the presets and variants that reach every knob the kernel compiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.rules import RuleSet, load_rules
from pontoon.sim import compiled as C
from pontoon.sim import kernel as K
from pontoon.sim.counting import Counting
from pontoon.sim.job import SPECIALISE_ROUNDS, Job, Kernel, run_chunk
from pontoon.sim.reference import engine_nets

# (preset, knobs, boxes, wager, rounds)
CASES = [
    ("nz-pontoon", {}, 1, 500, 14000),
    ("nz-pontoon", {}, 3, 2500, 6000),  # Super Bonus large, 11.2 to the other boxes
    ("nz-pontoon", {"decks": 1, "penetration": 1.0}, 5, 1001, 4000),  # 16.7, rounding
    (
        "nz-pontoon",
        {"dealer_peeks": True, "hit_split_aces": True, "resplit_aces": True},
        2,
        700,
        6000,
    ),
    (
        "nz-pontoon",
        {"double_on": "9-11", "double_after_split": False, "bonus_on_double": True},
        2,
        500,
        6000,
    ),
    ("nz-pontoon", {"double_on": "10-11", "surrender": "late", "split_max_hands": 2}, 2, 500, 6000),
    ("nz-pontoon", {"super_bonus_min": 100000, "dealer_natural_takes": "all"}, 2, 1000, 5000),
    ("nz-pontoon", {"double_rescue": True}, 2, 500, 6000),  # 12: no X rows: R/Rs cells rescue
    ("nz-pontoon", {"player_21_wins": False, "burn_card": False, "penetration": 0.3}, 2, 500, 5000),
    ("classic-blackjack", {}, 1, 500, 14000),
    ("classic-blackjack", {"surrender": "late", "dealer_hits_soft_17": True}, 3, 1500, 5000),
    ("spanish-21", {}, 2, 500, 9000),
    ("spanish-21", {"decks": 2, "double_on": "any-number", "penetration": 0.95}, 3, 555, 5000),
    ("nz-blackjack", {}, 2, 500, 9000),
    (
        "nz-blackjack",
        {"must_draw_below": 12, "surrender": "void-on-pontoon", "deck": "spanish"},
        2,
        500,
        7000,
    ),
]


def _chart(preset: str) -> Chart:
    """A fixed chart that doubles, splits and surrenders often (so every path is played)."""
    return Chart.from_csv(open(f"tests/data/sim/{preset}.csv", encoding="utf-8").read(), preset)


def _job(rules: RuleSet, chart: Chart, boxes: int, **kw: Any) -> Job:
    """The job of a case (on the generic kernel: these runs are short, see
    :func:`test_the_specialised_kernels_play_the_generic_kernels_rounds`). 11.2's payment to
    the other boxes is counted where one can be made (the Super Bonus, two boxes or more)."""
    return Job.build(rules, chart, boxes=boxes, others=rules.super_bonus and boxes > 1, **kw)


# Two specialisations that, between them, compile every switch (kernel.SWITCHES) in both ways:
# nz-pontoon (no peek, 9.2, soft 17 hit, 11.1 on doubles, 11.2, void-on-pontoon surrender, 12,
# a count, sessions and the trace, 11.2's payment counted, insurance by the count) and classic
# blackjack (the peek,
# split by value, 13.7 all, late surrender, no burn card, none of the rest).
SPECIALISED = [
    ("nz-pontoon", {"double_rescue": True, "bonus_on_double": True}, 3, True),
    ("classic-blackjack", {"surrender": "late", "burn_card": False}, 1, False),
]


@pytest.mark.parametrize(("preset", "knobs", "boxes", "extras"), SPECIALISED)
def test_the_specialised_kernels_play_the_generic_kernels_rounds(
    preset: str, knobs: dict[str, object], boxes: int, extras: bool
) -> None:
    """The kernel compiled with a job's switches as constants (long runs) and the generic
    kernel that reads them (short runs, and every test above) give the same results to the
    last bit: every accumulator, and the nets of every round where traced."""
    rules = load_rules(preset, knobs)
    more: dict[str, Any] = {}
    if extras:  # (insurance from a true count of +1: by the count of the cards on the table)
        more = {"counting": Counting.builtin("hi-lo"), "hands_per_session": 50, "bankroll": 5000}
        more["insure_from"] = 1
    got = []
    for kernel in (Kernel.GENERIC, Kernel.SPECIALISED):
        job = Job.build(rules, _chart(preset), boxes=boxes, others=extras, kernel=kernel, **more)
        got.append(run_chunk(job, 0xA11, 20_000, trace=extras))
    (generic, g_nets), (special, s_nets) = got
    for name in ("acc", "hist", "cats", "sessions", "counts"):
        assert np.array_equal(getattr(generic, name), getattr(special, name)), name
    assert np.array_equal(g_nets, s_nets)
    assert generic.cats[K.K_SPLIT] and generic.cats[K.K_DOUBLE] and generic.cats[K.K_SURRENDER]
    if extras:
        assert generic.cats[K.K_RESCUE] and generic.acc[K.A_SESSIONS] and g_nets.any()


def test_boxes_by_the_count_deal_the_boxes_of_a_table_of_that_many() -> None:
    """A job of up to 3 boxes that deals 1 at every true count plays the rounds of a one-box
    job, and 3 at every count those of a three-box job: every accumulator the same. Dealt 1 to
    3 by the count, it plays more boxes at high counts; one player's sessions are the boxes'
    total, ruined when the bankroll cannot cover the round's wagers."""
    rules, chart = load_rules("nz-pontoon"), _chart("nz-pontoon")
    hi_lo = Counting.builtin("hi-lo")

    def played(boxes: int, by_count: list[int], **kw: Any) -> Any:
        job = Job.build(rules, chart, boxes=boxes, counting=hi_lo, boxes_by_count=by_count, **kw)
        return run_chunk(job, 0xB0C5, 30_000)[0]

    for boxes, same in ((1, [1] * K.TCBINS), (3, [3] * K.TCBINS)):
        a, b = played(3, same), played(boxes, [])
        for name in ("acc", "hist", "cats", "counts"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), (boxes, name)
    ramp = [1] * (K.TCOFF + 1) + [2] * 2 + [3] * (K.TCOFF - 2)  # 2 from +1, 3 from +3
    mixed = played(3, ramp, hands_per_session=200, bankroll=10_000, one_player=True)
    played_at = mixed.counts[:, 3]  # rounds played at each true count (hi-lo bets 1-8 units)
    assert mixed.acc[K.A_WAGERED] == 500 * (played_at @ (hi_lo.ramp * np.array(ramp)))
    assert mixed.acc[K.A_SESSIONS] > 100 and 0 < mixed.acc[K.A_RUINED] < mixed.acc[K.A_SESSIONS]
    with pytest.raises(InputError, match="boxes by true count"):
        played(2, [3] * K.TCBINS)


def test_a_long_job_gets_its_own_kernel_and_a_short_one_the_generic() -> None:
    job = _job(load_rules("nz-pontoon"), _chart("nz-pontoon"), 1)
    assert job.kernel is Kernel.AUTO
    assert job.for_rounds(SPECIALISE_ROUNDS - 1).kernel is Kernel.GENERIC
    assert job.for_rounds(SPECIALISE_ROUNDS).kernel is Kernel.SPECIALISED
    forced = Job.build(load_rules("nz-pontoon"), _chart("nz-pontoon"), kernel=Kernel.GENERIC)
    assert forced.for_rounds(10 * SPECIALISE_ROUNDS).kernel is Kernel.GENERIC


def _rescue_chart(preset: str) -> Chart:
    """The test chart with rescue rows (12): rescue 6-16 against 7 to A, 17 against 9 to A,
    20 against a 2 (a rescue the analysis would never make), stand elsewhere."""
    chart = _chart(preset).with_rescues()
    for t in range(6, 21):
        for up in range(1, 11):
            rescue = (t <= 16 and up in (7, 8, 9, 10, 1)) or (t == 17 and up in (9, 10, 1))
            chart.set(f"X{t}", up, "R" if rescue or (t == 20 and up == 2) else "S")
    return chart


@pytest.mark.parametrize(
    ("preset", "knobs"),
    [("nz-pontoon", {"double_rescue": True}), ("spanish-21", {}), ("spanish-21", {"decks": 1})],
)
def test_rescue_rows_are_played_as_the_engine_plays_them(
    preset: str, knobs: dict[str, object]
) -> None:
    """12: a chart's rescue rows (X6-X20) decide the rescue of a doubled hand, in the kernel
    as in the engine (spanish-21: the peek game, doubling any number of cards)."""
    rules = load_rules(preset, knobs)
    chart = _rescue_chart(preset)
    job = _job(rules, chart, 2)
    key, rounds = 0xD0B1E, 5000
    res, nets = run_chunk(job, key, rounds, trace=True)
    assert res.cats[K.K_RESCUE] > 50
    ref = engine_nets(job, chart, key, rounds)
    bad = np.flatnonzero((nets != ref).any(axis=1))
    assert bad.size == 0, (int(bad[0]), nets[bad[0]].tolist(), ref[bad[0]].tolist())


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "knobs", "boxes", "wager", "rounds"), CASES)
def test_kernel_plays_the_engines_rounds(
    preset: str, knobs: dict[str, object], boxes: int, wager: int, rounds: int
) -> None:
    rules = load_rules(preset, knobs)
    chart = _chart(preset)
    job = _job(rules, chart, boxes, wager=wager)
    key = 0x5EED + rounds * 7 + boxes
    _, nets = run_chunk(job, key, rounds, trace=True)
    ref = engine_nets(job, chart, key, rounds)
    bad = np.flatnonzero((nets != ref).any(axis=1))
    assert bad.size == 0, (int(bad[0]), nets[bad[0]].tolist(), ref[bad[0]].tolist())


def test_the_cases_cover_100000_rounds() -> None:
    assert sum(c[-1] for c in CASES) >= 100_000


# Rare events, found by scanning keys with the kernel and then replayed by the engine:
# (preset, knobs, boxes, wager, counter that must be reached)
RARE = [
    ("nz-pontoon", {}, 7, 500, C.SUPER_BONUS),  # $1,000 (11.2)
    ("nz-pontoon", {}, 7, 2500, C.SUPER_BONUS),  # $5,000 and $50 to the other boxes
    ("nz-pontoon", {"super_bonus_min": 1000}, 7, 500, C.SUITED),  # below the minimum: odds
    ("nz-pontoon", {}, 7, 500, C.SPADES),
    ("nz-pontoon", {}, 7, 500, C.SEVEN),
    ("nz-pontoon", {"decks": 1, "penetration": 1.0}, 7, 500, K.K_SHUFFLE_16_7),
    ("nz-pontoon", {"double_rescue": True}, 2, 500, K.K_RESCUE),  # 12
    ("spanish-21", {}, 2, 500, K.K_RESCUE),  # 12, in the peek game
    ("spanish-21", {"decks": 1, "penetration": 1.0}, 3, 500, K.K_SHUFFLE_16_7),  # hole card
]


@pytest.mark.parametrize(("preset", "knobs", "boxes", "wager", "counter"), RARE)
def test_rare_events_match_the_engine(
    preset: str, knobs: dict[str, object], boxes: int, wager: int, counter: int
) -> None:
    rules = load_rules(preset, knobs)
    chart = _chart(preset)
    job = _job(rules, chart, boxes, wager=wager)
    rounds = 40
    for key in range(1, 200_000):
        res, nets = run_chunk(job, key, rounds, trace=True)
        if res.cats[counter]:
            break
    else:
        raise AssertionError("no key reaches the event")
    ref = engine_nets(job, chart, key, rounds)
    assert (nets == ref).all(), np.flatnonzero((nets != ref).any(axis=1))


@pytest.mark.parametrize(
    ("preset", "knobs", "boxes"),
    [
        ("nz-pontoon", {"decks": 1, "penetration": 0.5}, 3),  # 8.7: the cut card comes mid-round
        ("classic-blackjack", {"decks": 2, "penetration": 0.75}, 2),  # 8.1 burn, 8.7, 8.8
        ("nz-pontoon", {"decks": 1, "penetration": 1.0}, 5),  # 16.7: the shoe runs out
        ("nz-pontoon", {"decks": 1, "penetration": 0.9}, 7),  # 16.7 after the cut card: 8.7
    ],
)
def test_8_7_8_8_16_7_the_kernel_shuffles_when_the_engine_does(
    preset: str, knobs: dict[str, object], boxes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel checks the cutting card once before each round, not at every draw: it must
    reshuffle exactly where the engine's Shoe does (8.7 after the cut card came out, 8.8 when
    it is next, 16.7 when the shoe runs out mid-round), round for round."""
    import pontoon.sim.reference as reference

    made: list[reference.KernelShuffler] = []

    class Counted(reference.KernelShuffler):
        def __init__(self, chunk_key: int) -> None:
            super().__init__(chunk_key)
            made.append(self)

    monkeypatch.setattr(reference, "KernelShuffler", Counted)
    rules = load_rules(preset, knobs)
    chart = _chart(preset)
    job = _job(rules, chart, boxes)
    res, nets = run_chunk(job, 0xC07, 2000, trace=True)
    ref = engine_nets(job, chart, 0xC07, 2000)
    assert (nets == ref).all()
    kernel_shuffles = int(res.cats[K.K_SHUFFLE] + res.cats[K.K_SHUFFLE_16_7])
    assert kernel_shuffles == made[0].shuffles > 2000 * (2 * boxes + 3) // (52 * rules.decks)
    if boxes >= 5:
        assert res.cats[K.K_SHUFFLE_16_7] > 0


@pytest.mark.slow  # (a kernel compiled for each case: a job that insures is never generic)
@pytest.mark.parametrize(
    ("preset", "knobs", "boxes"),
    [
        ("nz-pontoon", {}, 3),  # no hole card: insured after the pontoons are paid (9.1)
        # the peek game: insured before the peek, naturals too; other odds and maximum
        ("classic-blackjack", {"insurance_pays": "3/2", "insurance_max": "1/3"}, 2),
    ],
)
def test_10_insurance_is_taken_and_settled_as_the_engine_does(
    preset: str, knobs: dict[str, object], boxes: int
) -> None:
    """10: every box insuring against a dealer ace, the most it may, in the kernel as in the
    round engine on the same shoes (the dealer's second card drawn for an insured box even
    when every hand busted, 16.11; insurance paid at its odds on a dealer pontoon, else
    lost); and insuring changes the nets of rounds with an ace up, and only those."""
    rules = load_rules(preset, knobs)
    chart = _chart(preset)
    job = _job(rules, chart, boxes, insure_from=0)
    key, rounds = 0x1E5, 6000
    _, nets = run_chunk(job, key, rounds, trace=True)
    ref = engine_nets(job, chart, key, rounds)
    bad = np.flatnonzero((nets != ref).any(axis=1))
    assert bad.size == 0, (int(bad[0]), nets[bad[0]].tolist(), ref[bad[0]].tolist())
    _, plain = run_chunk(_job(rules, chart, boxes), key, rounds, trace=True)
    assert (nets != plain).any(axis=1).sum() > rounds // 20  # about one round in 13: an ace
    assert np.array_equal(engine_nets(_job(rules, chart, boxes), chart, key, rounds), plain)
    never = _job(rules, chart, boxes, insure_from=1)  # a count of 1: never reached uncounted
    assert np.array_equal(run_chunk(never, key, rounds, trace=True)[1], plain)


@pytest.mark.slow
def test_10_the_insurance_index_gains_what_the_simulator_shows(tmp_path: Path) -> None:
    """The Illustrious 18's insurance index (hi-lo, insure from +3) played by the simulator
    beside the same index chart without it, on the same shoes: the rounds differ only where
    the count reached +3 with an ace up (under 1 %), and the index gains, paired round by
    round, more than three standard errors (about +0.12 % of the minimum bet a round)."""
    from pontoon.analysis import analyze
    from pontoon.count.indices import index_charts, insurance_from, read_indices

    published = Path("tests/data/reference/illustrious_18.csv").read_text("utf-8")
    (tmp_path / "ix.csv").write_text(
        "".join(r for r in published.splitlines(True) if not r.startswith("#")), "utf-8"
    )
    ix = read_indices(str(tmp_path / "ix.csv"))
    assert insurance_from(ix) == 3
    rules = load_rules("classic-blackjack")
    report = analyze(rules, "basic", wager=500)
    assert report.chart is not None
    charts = index_charts(report.chart, ix)
    hi_lo = Counting.builtin("hi-lo")
    insuring = Job.build(rules, report.chart, counting=hi_lo, indices=charts, insure_from=3)
    declining = Job.build(rules, report.chart, counting=hi_lo, indices=charts)
    gains = []
    for key in range(1, 6):
        _, a = run_chunk(insuring, key, 400_000, trace=True)
        _, b = run_chunk(declining, key, 400_000, trace=True)
        gains.append((a[:, 0] - b[:, 0]) / 500)
    gain = np.concatenate(gains)
    assert 0 < np.count_nonzero(gain) < 0.01 * gain.size
    se = gain.std(ddof=1) / np.sqrt(gain.size)
    assert gain.mean() > 3 * se, (gain.mean(), se)
