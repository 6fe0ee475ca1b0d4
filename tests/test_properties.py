"""Property tests: thousands of random rounds under random rule sets keep the engine's
invariants after every action.

- Cards are conserved (shoe + layout + discard rack == the full pack; 8.6, 16.7).
- Money is conserved: players + table + house == 0; the event log accounts for every
  cent; the table is empty at the end of a round; the house pays only winning wagers and the
  11.2 Super Bonus 'others'.
- A move that :meth:`Round.check` refuses is refused by :meth:`Round.apply` too, names its
  rule and changes nothing; every move in :meth:`Round.legal_moves` passes ``check``.
- Every round ends; then every wager is settled, and the log replays to the same log (8.6).
- A few rules are checked from outside: 14.2 (a bust loses at once), 9.2 (a 21 is paid at
  once), 14.3 (the dealer's draws), 14.4 (no second dealer card nothing depends on).

Hypothesis draws the rule set and the seeds (so it shrinks towards a simple rule set); a
seeded ``random.Random`` plays the rounds, so a failure prints everything needed to rerun it.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, MutableSequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pontoon.cards import Card
from pontoon.errors import IllegalAction, InputError
from pontoon.events import Event
from pontoon.hand import hard_total, is_pontoon, total
from pontoon.replay import replay
from pontoon.round import ACTIONS, Hand, Move, Round, Wager
from pontoon.rules import PRESETS, RuleSet, load_rules
from pontoon.settlement import super_bonus_amount, winnings
from pontoon.shoe import Shoe

OUTCOMES = {"win", "lose", "push", "surrender", "void"}
EVENT_OUTCOMES = {"win", "lose", "bust", "push", "surrender", "void"}
STEP_LIMIT = 400

PROPERTY_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# ---------------------------------------------------------------------------- the shoe
class BiasedShuffler:
    """A seeded shuffle that, now and then, brings the cards of a few ranks to the front of
    the shoe, so that pairs (splits, resplits), pontoons (9.1, insurance, 9.4, 13.7) and
    suited sevens (11.2) come up far more often than in a fair shoe. Still a permutation of
    the same cards, so card conservation is tested as before."""

    def __init__(self, seed: int, bias: float) -> None:
        self.rng = random.Random(seed)
        self.bias = bias

    def shuffle(self, x: MutableSequence[Card], /) -> None:
        self.rng.shuffle(x)
        if self.rng.random() >= self.bias:
            return
        ranks = set(self.rng.sample(range(1, 14), self.rng.randint(1, 3)))
        suits = self.rng.choice(["SHDC", "SHDC", *"SHDC"])
        front = [c for c in x if c.rank in ranks and c.suit in suits]
        back = [c for c in x if not (c.rank in ranks and c.suit in suits)]
        self.rng.shuffle(front)
        # The next card is the end of the list (Shoe draws with pop()).
        x[:] = back + front


# ---------------------------------------------------------------------------- rule sets
@st.composite
def rule_sets(draw: st.DrawFn) -> RuleSet:
    """A preset with a random selection of its knobs changed."""
    preset = draw(st.sampled_from(PRESETS))
    knobs: dict[str, Any] = {}

    def maybe(name: str, strategy: st.SearchStrategy[Any]) -> None:
        if draw(st.booleans()):
            knobs[name] = draw(strategy)

    maybe("decks", st.integers(1, 8))
    maybe("penetration", st.sampled_from([0.2, 0.5, 0.75, 0.9, 1.0]))
    maybe("burn_card", st.booleans())
    maybe("dealer_peeks", st.booleans())
    maybe("dealer_hits_soft_17", st.booleans())
    maybe("dealer_natural_takes", st.sampled_from(["original", "all"]))
    maybe("player_21_wins", st.booleans())
    maybe("must_draw_below", st.sampled_from([0, 12]))
    maybe("surrender", st.sampled_from(["none", "late", "void-on-pontoon"]))
    maybe("insurance", st.booleans())
    maybe("insurance_max", st.sampled_from(["1:2", "1:1", "1:3"]))
    maybe("double_on", st.sampled_from(["any-two", "any-number", "9-11", "10-11"]))
    maybe("double_after_split", st.booleans())
    maybe("double_rescue", st.booleans())
    maybe("split_max_hands", st.integers(1, 4))
    maybe("split_by", st.sampled_from(["rank", "value"]))
    maybe("resplit_aces", st.booleans())
    maybe("hit_split_aces", st.booleans())
    maybe("bonuses", st.booleans())
    maybe("bonus_on_double", st.booleans())
    maybe("super_bonus", st.booleans())
    maybe("players_per_box", st.integers(1, 3))
    maybe("deck", st.sampled_from(["spanish", "standard"]))
    boxes = draw(st.integers(1, 7))
    knobs["boxes"] = boxes
    knobs["boxes_per_player"] = draw(st.integers(1, boxes))
    table_min = draw(st.sampled_from([1, 3, 100, 500]))
    knobs["table_min"] = table_min
    knobs["table_max"] = table_min * draw(st.sampled_from([1, 2, 7, 200]))
    knobs["box_max"] = draw(st.sampled_from([0, 0, table_min, 3 * table_min]))
    if draw(st.booleans()):
        knobs["super_bonus_min"] = draw(st.sampled_from([0, table_min, 2 * table_min]))
        knobs["super_bonus_threshold"] = draw(st.sampled_from([table_min, 5 * table_min]))
        knobs["super_bonus_others"] = draw(st.sampled_from([0, 1, 5000]))
    return load_rules(preset, knobs)


# ---------------------------------------------------------------------------- snapshots
def _wager(w: Wager) -> tuple[Any, ...]:
    return (w.player, w.stake, w.double, w.settled, w.outcome, w.odds, w.net)


def _hand(h: Hand) -> tuple[Any, ...]:
    return (
        tuple(c.code for c in h.cards),
        tuple(_wager(w) for w in h.wagers),
        h.from_split,
        h.split_aces,
        h.doubled,
        h.acted,
        h.state,
        h.discarded,
    )


def snapshot(rnd: Round, shoe: Shoe | None) -> tuple[Any, ...]:
    """Everything a refused move must leave as it was."""
    fu = rnd.follow_ups
    boxes = tuple(
        (
            b.number,
            tuple(b.players),
            tuple(b.original.items()),
            tuple(_hand(h) for h in b.hands),
            tuple((p, _wager(w)) for p, w in b.insurance.items()),
            tuple(sorted(b.declined_insurance)),
        )
        for b in rnd.boxes.values()
    )
    shoe_state: tuple[Any, ...] = ()
    if shoe is not None:
        shoe_state = (
            tuple(c.code for c in shoe.remaining),
            len(shoe.discards),
            shoe.cut_reached,
            shoe.shuffles,
            shoe.behind_cut,
        )
    return (
        tuple(rnd.events),
        tuple(rnd.balance.items()),
        rnd.table,
        rnd.house,
        rnd.phase,
        rnd.turn,
        rnd.hand_index,
        None if fu is None else (fu.kind, fu.hand, tuple(fu.waiting)),
        tuple(c.code for c in rnd.dealer),
        rnd.hole.code if rnd.hole else None,
        tuple(b.number for b in rnd.order),
        boxes,
        shoe_state,
    )


# ---------------------------------------------------------------------------- invariants
def all_wagers(rnd: Round) -> list[tuple[int, int | None, Wager]]:
    """(box, hand index or None for insurance, wager) for every wager of the round."""
    out: list[tuple[int, int | None, Wager]] = []
    for box in rnd.boxes.values():
        for i, hand in enumerate(box.hands):
            out += [(box.number, i, w) for w in hand.wagers]
        out += [(box.number, None, w) for w in box.insurance.values()]
    return out


def check_cards(rnd: Round, shoe: Shoe) -> None:
    """Cards are conserved: shoe + layout + discard rack is the full pack."""
    seen = Counter(shoe.remaining) + Counter(rnd.cards_on_layout()) + Counter(shoe.discards)
    assert seen == Counter(shoe.full_pack), "cards not conserved"


def check_money(rnd: Round) -> None:
    """Money is conserved, and the event log accounts for every movement of it."""
    assert sum(rnd.balance.values()) + rnd.table + rnd.house == 0
    sums: Counter[str] = Counter()
    player_sums: dict[str, int] = Counter()
    box_player: dict[tuple[int, str], int] = Counter()  # pay - collect per (box, player)
    staked: dict[tuple[int, str], int] = Counter()
    taken_back: dict[tuple[int, str], int] = Counter()
    last: Event | None = None
    for e in rnd.events:
        if e.kind == "outcome":
            assert e.detail in EVENT_OUTCOMES, e
            last = e
        if e.kind not in ("stake", "return", "collect", "pay"):
            continue
        assert e.amount is not None and e.amount > 0, e
        assert e.player is not None and e.box is not None, e
        sums[e.kind] += e.amount
        key = (e.box, e.player)
        if e.kind == "stake":
            player_sums[e.player] -= e.amount
            staked[key] += e.amount
            continue
        # Every payment follows the outcome it settles (no money moves without a reason).
        assert last is not None, f"{e} with no outcome before it"
        same = (last.box, last.hand, last.player) == (e.box, e.hand, e.player)
        if e.kind == "pay":
            player_sums[e.player] += e.amount
            others = e.player not in rnd.boxes[e.box].players
            if others:  # 11.2: the Super Bonus pays every other player at the table
                assert e.rule == "11.2" and last.rule == "11.2" and last.detail == "win", e
                assert last.box == e.box and last.hand == e.hand, e
                continue
            assert same and last.detail == "win", f"the house paid {e} after {last}"
            box_player[key] += e.amount
        elif e.kind == "collect":
            assert same and last.detail in ("lose", "bust", "surrender"), f"{e} after {last}"
            box_player[key] -= e.amount
            taken_back[key] += e.amount
        else:
            assert same, f"{e} after {last}"
            player_sums[e.player] += e.amount
            taken_back[key] += e.amount
    assert sums["stake"] - sums["return"] - sums["collect"] == rnd.table
    assert sums["pay"] - sums["collect"] == -rnd.house
    for player, net in rnd.balance.items():
        assert player_sums.get(player, 0) == net, player
    # No wager loses more than was staked on it.
    for key, amount in taken_back.items():
        assert amount <= staked[key], key
    # Each settled wager's net is what the log moved for it.
    nets: dict[tuple[int, str], int] = Counter()
    amounts: dict[tuple[int, str], int] = Counter()
    for number, _, w in all_wagers(rnd):
        amounts[number, w.player] += w.amount
    for box in rnd.boxes.values():
        if not box.hands:  # before the deal the wagers are the box's original ones
            for player, amount in box.original.items():
                amounts[box.number, player] += amount
        if w.settled:
            nets[number, w.player] += w.net
    for key in set(nets) | set(box_player):
        assert nets.get(key, 0) == box_player.get(key, 0), key
    for key in set(amounts) | set(staked):
        assert amounts.get(key, 0) == staked.get(key, 0), f"stakes of {key}"
    for player, net in rnd.balance.items():
        stakes = sum(a for (_, p), a in staked.items() if p == player)
        assert net >= -stakes, player


def check_wager_values(rnd: Round) -> None:
    """A settled wager's net fits its outcome (5.1, 9.3, 11.1, 11.2, 12, 13.7)."""
    r = rnd.rules
    for _, _, w in all_wagers(rnd):
        if not w.settled:
            assert w.outcome is None and w.net == 0
            continue
        assert w.outcome in OUTCOMES, w
        if w.outcome == "win":
            if w.odds is not None:
                assert w.net == winnings(w.amount, w.odds), w
            else:  # 11.2
                assert w.net == super_bonus_amount(r, w.amount), w
        elif w.outcome == "push":
            assert w.net == 0, w
        elif w.outcome == "lose":
            assert -w.amount <= w.net <= 0, w
        elif w.outcome == "surrender":
            half = -(w.amount - winnings(w.amount, r.surrender_returns))
            assert w.net in (half, -w.stake), w  # 9.3, or 12 (double-down rescue)


def check_hands(rnd: Round) -> None:
    """Hand states against 14.1, 14.2 and 9.2."""
    r = rnd.rules
    for box in rnd.order:
        for hand in box.hands:
            if hard_total(hand.cards) > 21:  # 14.2: a bust loses at once
                assert hand.discarded and hand.state == "settled"
                assert all(w.settled and w.outcome == "lose" for w in hand.wagers)
            if hand.state == "open":
                assert total(hand.cards) < 21, "14.1(a): an open hand of 21 or more"
                assert not any(w.settled for w in hand.wagers)
                assert not hand.discarded
            paid_now = r.player_21_wins and rnd.phase == "playing" and hand.state != "super"
            if paid_now and total(hand.cards) == 21 and len(hand.cards) >= 2:
                assert all(w.settled and w.outcome == "win" for w in hand.wagers), (
                    "9.2: a 21 is paid at once"
                )
    cur = rnd.current()
    if cur is not None and rnd.follow_ups is None:
        assert cur[1].state == "open"


def check_state(rnd: Round, shoe: Shoe) -> None:
    check_cards(rnd, shoe)
    check_money(rnd)
    check_wager_values(rnd)
    check_hands(rnd)


def should_draw(cards: list[Card], rules: RuleSet) -> bool:
    """14.3: the dealer draws to hard 17 or soft 18 (hits soft 17 when the knob says so)."""
    t = total(cards)
    soft = t != hard_total(cards)
    return t < 17 or (t == 17 and soft and rules.dealer_hits_soft_17)


def check_dealer(rnd: Round) -> None:
    """14.3 and 14.4, checked from the log at the end of a round."""
    r = rnd.rules
    cards: list[Card] = []
    second_at: int | None = None
    for i, e in enumerate(rnd.events):
        if (e.kind == "deal" and e.box is None) or e.kind == "reveal":
            assert e.card is not None
            if e.rule == "14.3":
                assert should_draw(cards, r), f"14.3: the dealer drew to {cards}"
                assert not is_pontoon(cards)
            cards.append(Card.parse(e.card))
            if len(cards) == 2 and second_at is None:
                second_at = i
    assert [c.code for c in cards] == [c.code for c in rnd.dealer]
    compared = any(e.kind == "outcome" and e.rule == "5.1" for e in rnd.events)
    if compared and not is_pontoon(cards) and len(cards) >= 2:
        assert total(cards) > 21 or not should_draw(cards, r), f"14.3: dealer stood on {cards}"
    if r.dealer_peeks:
        return
    n_wagers = len(all_wagers(rnd))
    if second_at is not None:  # 14.4: the second card is dealt only when something depends
        before = sum(1 for e in rnd.events[:second_at] if e.kind == "outcome")
        assert before < n_wagers, "14.4: the dealer drew a card that could change nothing"
    else:
        late = {"5.1", "13.7", "9.4", "10"}
        assert not any(e.kind == "outcome" and e.rule in late for e in rnd.events), (
            "14.4: a wager settled against the dealer's first card alone"
        )


def check_replay(rnd: Round) -> None:
    """8.6: the log rebuilds the round: same log, same money (also through JSON)."""
    again = replay(rnd.events)
    assert again.events == rnd.events
    assert again.balance == rnd.balance
    assert (again.table, again.house, again.phase) == (rnd.table, rnd.house, rnd.phase)


def check_end(rnd: Round, shoe: Shoe) -> None:
    assert rnd.over and rnd.events[-1].kind == "end"
    assert rnd.table == 0
    assert rnd.follow_ups is None and rnd.hole is None
    assert rnd.cards_on_layout() == []
    assert Counter(shoe.remaining) + Counter(shoe.discards) == Counter(shoe.full_pack)
    for _, _, w in all_wagers(rnd):
        assert w.settled and w.outcome in OUTCOMES, w
    for box in rnd.order:
        assert all(h.state == "settled" and h.discarded for h in box.hands)
    check_dealer(rnd)
    check_replay(rnd)
    again = replay([Event.from_json(e.to_json()) for e in rnd.events])
    assert again.events == rnd.events


# ---------------------------------------------------------------------------- playing
def refused(rnd: Round, shoe: Shoe, attempt: Callable[[], None], check: Callable[[], None]) -> bool:
    """If ``check`` raises IllegalAction, ``attempt`` must raise it too and change nothing.
    Returns whether the action was refused."""
    before = snapshot(rnd, shoe)
    try:
        check()
    except IllegalAction as exc:
        assert "rule " in str(exc), str(exc)
        assert snapshot(rnd, shoe) == before, "check() changed the state"
        with pytest.raises(IllegalAction):
            attempt()
        assert snapshot(rnd, shoe) == before, f"a refused action changed the state: {exc}"
        return True
    assert snapshot(rnd, shoe) == before, "check() changed the state"
    return False


def random_move(rnd: Round, rng: random.Random) -> Move:
    """Any move at all, mostly illegal."""
    boxes = [*rnd.boxes, 0, rnd.rules.boxes + 1, rng.randint(1, 7)]
    return Move(
        rng.choice([*ACTIONS, "fold", ""]),
        rng.choice(boxes),
        hand=rng.choice([None, None, 0, 1, 2, 3, -1, 5]),
        player=rng.choice([None, None, "nobody", *rnd.players]),
        amount=rng.choice([None, None, 0, 1, -5, 10**9, rng.randint(1, rnd.rules.table_max)]),
        follow=rng.choice([None, None, "both", 0, 1, 2, "x"]),
    )


def seated_of(rnd: Round, move: Move) -> str | None:
    box = rnd.boxes.get(move.box)
    return move.player or (box.seated if box else None)


def try_illegal(rnd: Round, shoe: Shoe, rng: random.Random) -> None:
    move = random_move(rnd, rng)
    if not refused(rnd, shoe, lambda: rnd.apply(move), lambda: rnd.check(move)):
        # check() let it through: the same decision must be among the legal moves.
        legal = {(m.action, m.box, seated_of(rnd, m)) for m in rnd.legal_moves()}
        assert (move.action, move.box, seated_of(rnd, move)) in legal, move


def vary(rnd: Round, move: Move, rng: random.Random) -> Move:
    """Insurance and doubles may be for less than the most (10, 12, 15.3(c))."""
    if move.action not in ("insure", "double") or rng.random() < 0.5:
        return move
    amount = 1 if rng.random() < 0.4 else rng.randint(1, rnd.rules.table_max)
    varied = Move(move.action, move.box, player=move.player, amount=amount)
    return varied if rnd.can(varied) else move


def place_wagers(rnd: Round, shoe: Shoe, rng: random.Random) -> None:
    r = rnd.rules
    pool = [f"p{i}" for i in range(rng.randint(1, 6))]
    for _ in range(rng.randint(1, 3 * r.boxes)):
        box = rng.choice([rng.randint(1, r.boxes), rng.randint(1, r.boxes), 0, r.boxes + 1])
        player = rng.choice([*pool, ""])
        amount = rng.choice(
            [
                r.table_min,
                r.table_max,
                rng.randint(r.table_min, r.table_max),
                r.table_min - 1,
                r.table_max + 1,
            ]
        )
        if not refused(
            rnd,
            shoe,
            lambda b=box, p=player, a=amount: rnd.place_wager(b, p, a),
            lambda b=box, p=player, a=amount: rnd.check_wager(b, p, a),
        ):
            rnd.place_wager(box, player, amount)
        check_money(rnd)
    if not rnd.boxes:
        assert refused(rnd, shoe, rnd.deal, rnd.deal)  # 8.2: no box holds a wager
        rnd.place_wager(rng.randint(1, r.boxes), pool[0], r.table_min)


def play_round(rnd: Round, shoe: Shoe, rng: random.Random, *, illegal: float = 0.5) -> None:
    """Play to the end with random legal moves, trying random illegal ones on the way."""
    weights = {a: rng.choice([0.1, 1.0, 3.0]) for a in ACTIONS}
    defaults = rng.choice([0.0, 0.05, 0.3])
    replay_at = rng.randint(0, 12)
    rnd.deal()
    check_state(rnd, shoe)
    for step in range(STEP_LIMIT):
        if rnd.over:
            break
        legal = rnd.legal_moves()
        assert legal, f"round stuck: phase {rnd.phase}, no legal move"
        for m in legal:
            rnd.check(m)
        while rng.random() < illegal:
            try_illegal(rnd, shoe, rng)
        if rng.random() < 0.1:
            m = Move("wager", 1, amount=rnd.rules.table_min)
            assert refused(  # 8.2: no bets after 'No more bets'
                rnd,
                shoe,
                lambda: rnd.place_wager(1, "late", rnd.rules.table_min),
                lambda: rnd.check_wager(1, "late", rnd.rules.table_min),
            ), m
        if rng.random() < defaults:
            rnd.apply_defaults()
        else:
            move = rng.choices(legal, [weights[m.action] for m in legal])[0]
            rnd.apply(vary(rnd, move, rng))
        check_state(rnd, shoe)
        if step == replay_at and not rnd.over:
            check_replay(rnd)  # a round still in play replays too
    assert rnd.over, f"round not over after {STEP_LIMIT} moves"
    check_end(rnd, shoe)
    assert refused(rnd, shoe, rnd.deal, rnd.deal)


def play_session(rules: RuleSet, seed: int, rounds: int, bias: float) -> int:
    """``rounds`` rounds on one shoe; returns how many were played."""
    rng = random.Random(seed)
    shoe = Shoe(rules, BiasedShuffler(seed, bias))
    for _ in range(rounds):
        rnd = Round(rules, shoe)
        check_cards(rnd, shoe)
        place_wagers(rnd, shoe, rng)
        play_round(rnd, shoe, rng)
    return rounds


# ---------------------------------------------------------------------------- properties
@PROPERTY_SETTINGS
@given(
    rules=rule_sets(),
    seed=st.integers(0, 2**32 - 1),
    rounds=st.integers(5, 20),
    bias=st.sampled_from([0.0, 0.3, 0.8]),
)
def test_random_rounds_keep_every_invariant(
    rules: RuleSet, seed: int, rounds: int, bias: float
) -> None:
    play_session(rules, seed, rounds, bias)


@PROPERTY_SETTINGS
@given(
    preset=st.sampled_from(PRESETS),
    decks=st.integers(1, 2),
    boxes=st.integers(3, 7),
    seed=st.integers(0, 2**32 - 1),
)
def test_16_7_small_shoe_runs_out_mid_round(preset: str, decks: int, boxes: int, seed: int) -> None:
    """A one- or two-deck shoe dealt to the end (penetration 1) to a full table: the shoe runs
    out in the middle of rounds and the discards are shuffled back (16.7)."""
    rules = load_rules(
        preset,
        {"decks": decks, "penetration": 1.0, "boxes": boxes, "table_min": 1, "table_max": 10},
    )
    rng = random.Random(seed)
    shoe = Shoe(rules, BiasedShuffler(seed, 0.5))
    for _ in range(12):
        rnd = Round(rules, shoe)
        for b in range(1, boxes + 1):
            for p in range(rules.players_per_box):
                rnd.place_wager(b, f"b{b}p{p}", rng.randint(1, 10))
        play_round(rnd, shoe, rng, illegal=0.0)


# ---------------------------------------------------------------------------- fixed seeds
@pytest.mark.parametrize("preset", PRESETS)
def test_fixed_seed_first_legal_move_2000_rounds(preset: str) -> None:
    """2,000 rounds, one box, the first legal move every time: easy to rerun on a failure."""
    rules = load_rules(preset, {"decks": 2})
    shoe = Shoe(rules, random.Random(20240601))
    for _ in range(2000):
        rnd = Round(rules, shoe)
        rnd.place_wager(1, "ana", rules.table_min)
        rnd.deal()
        check_cards(rnd, shoe)
        check_money(rnd)
        for _ in range(STEP_LIMIT):
            if rnd.over:
                break
            legal = rnd.legal_moves()
            assert legal, "round stuck"
            rnd.apply(legal[0])
            check_cards(rnd, shoe)
            check_money(rnd)
        check_end(rnd, shoe)


@pytest.mark.parametrize("preset", PRESETS)
def test_fixed_seed_full_table_random_moves(preset: str) -> None:
    """A full table with players behind, random moves and illegal attempts, fixed seeds."""
    rules = load_rules(preset)
    assert play_session(rules, seed=7, rounds=150, bias=0.5) == 150


def test_fixed_seed_one_deck_reshuffles() -> None:
    rules = load_rules("nz-pontoon", {"decks": 1, "penetration": 0.9, "table_min": 1})
    assert play_session(rules, seed=11, rounds=300, bias=0.3) == 300


def test_refused_moves_name_a_rule() -> None:
    rules = load_rules("nz-pontoon")
    rnd = Round(rules, Shoe(rules, random.Random(1)))
    with pytest.raises(IllegalAction, match="rule 8.2"):
        rnd.apply(Move("hit", 1))
    with pytest.raises(IllegalAction, match="rule 8.2"):
        rnd.deal()
    rnd.place_wager(1, "ana", 1000)
    with pytest.raises(IllegalAction, match="rule 15.2"):
        rnd.place_wager(1, "ana", rules.table_max)
    with pytest.raises(InputError):
        rnd.place_wager(2, "bo", 1.5)  # type: ignore[arg-type]
    json.dumps([e.to_dict() for e in rnd.events])
