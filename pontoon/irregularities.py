"""Irregularities: the procedures of Pontoon section 16 and Blackjack 1996 15.5-15.11.

Each procedure is an :class:`Irregularity` applied to a round by the dealer or a supervisor,
never a player. It acts through the round's public dealer steps
(:class:`pontoon.dealer.DealerSteps`), never its private methods. Like a move it is checked
first — refused with the rule number when its conditions do not hold, changing nothing — and
recorded as an ``irregularity`` event naming the rule and who applied it, so the round replays
with it.

=========================== ============== =============== ===================================
kind                        Pontoon        Blackjack 1996  what happens
=========================== ============== =============== ===================================
``face-up-in-shoe``         16.1           —               the next card goes to the discards
``drawn-unexposed``         16.2           —               used as the next card (recorded)
``exposed-to-dealer``       16.3           15.6            the next card goes to the discards
``exposed-card``            16.4           15.7            the next card is exposed and offered
                                                           in turn; ``refuse`` stops a hand
``reconstruct``             16.5           15.8            the layout stands as it should be
``void``                    16.5           15.8            the round, or a box's hand(s), void
``absent``                  16.6           15.9            the box in turn is drawn to 12+
                                                           (15.9: while hard 11 or less)
``shoe-exhausted``          16.7           15.10           a scripted shoe ran out: discards
                                                           shuffled (a real shoe does it itself)
``damaged``                 16.8           15.11           ``card`` replaced at the round's end
``missed-reshuffle``        16.9           —               reshuffle when the round ends
``missing-cutting-card``    16.10          —               reshuffle when the round ends
``missed-insurance``        16.11          —               insurance still open to ``player``
``missed-surrender``        16.12          —               ``box`` may still surrender
``dealer-first-card-omitted`` —            15.5            reconstruct, or each seated player
                                                           chooses ``void`` or ``complete``
=========================== ============== =============== ===================================

The interrupted-round policy (knob ``interrupted``, assumed: no rule gazettes it) is recorded
the same way, applied ``by`` the ``policy`` and never by a person (:data:`INTERRUPTED`):
``interrupted-abandoned`` (a decision awaited longer than ``interrupted_minutes``) or
``interrupted-failure`` (the table came back from a failure later than that). Its rule says
which policy: ``16.5 (assumed: interrupted=void)`` voids the whole round as 16.5 does, every
wager returned; ``16.6 (assumed: interrupted=complete)`` only records that from then on the
policy decides for every player (the table plays the optimal chart: docs/operators/deploying.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pontoon.cards import Card, deck
from pontoon.dealer import DealerSteps
from pontoon.errors import IllegalAction, InputError
from pontoon.hand import hard_total, is_pontoon
from pontoon.layout import Box
from pontoon.shoe import ScriptedCards, Shoe
from pontoon.vocab import EventKind, HandState, Phase, Procedure, Role

P = Procedure

ROLES: Final = (Role.DEALER, Role.SUPERVISOR)  # who applies a procedure of the rule book


# kind -> {rule book: (rule, supervisor only)}
PROCEDURES: Final[dict[str, dict[str, tuple[str, bool]]]] = {
    P.FACE_UP_IN_SHOE: {"pontoon": ("16.1", False)},
    P.DRAWN_UNEXPOSED: {"pontoon": ("16.2", False)},
    P.EXPOSED_TO_DEALER: {"pontoon": ("16.3", False), "blackjack": ("15.6", False)},
    P.EXPOSED_CARD: {"pontoon": ("16.4", False), "blackjack": ("15.7", False)},
    P.RECONSTRUCT: {"pontoon": ("16.5", True), "blackjack": ("15.8", True)},
    P.VOID: {"pontoon": ("16.5", True), "blackjack": ("15.8", True)},
    P.ABSENT: {"pontoon": ("16.6", True), "blackjack": ("15.9", True)},
    P.SHOE_EXHAUSTED: {"pontoon": ("16.7", False), "blackjack": ("15.10", False)},
    P.DAMAGED: {"pontoon": ("16.8", False), "blackjack": ("15.11", True)},
    P.MISSED_RESHUFFLE: {"pontoon": ("16.9", False)},
    P.MISSING_CUTTING_CARD: {"pontoon": ("16.10", False)},
    P.MISSED_INSURANCE: {"pontoon": ("16.11", False)},
    P.MISSED_SURRENDER: {"pontoon": ("16.12", False)},
    P.DEALER_FIRST_CARD_OMITTED: {"blackjack": ("15.5", True)},
}
# The interrupted-round policy's procedures (not the rule book's: applied by the policy alone).
INTERRUPTED: Final = (P.ABANDONED, P.FAILURE)
# Procedures that take a card out of the shoe: the card is in their event, for replay.
DRAWING: Final = (
    P.FACE_UP_IN_SHOE,
    P.EXPOSED_TO_DEALER,
    P.EXPOSED_CARD,
    P.DEALER_FIRST_CARD_OMITTED,
)


@dataclass(frozen=True, slots=True)
class Irregularity:
    """A procedure: ``kind`` (see the module table), applied ``by`` the dealer or a
    supervisor; ``box``/``hand``/``player``/``card`` where the procedure needs them."""

    kind: str
    by: str = Role.DEALER
    box: int | None = None
    hand: int | None = None
    player: str | None = None
    card: str | None = None

    def __str__(self) -> str:
        where = f" box {self.box}" if self.box is not None else ""
        return f"{self.kind}{where} by {self.by}"


def interrupted_rule(rnd: DealerSteps) -> str:
    """The rule an interrupted round is recorded under: its policy, assumed, and the rule
    of the book it follows (16.5's void; 16.6's hands played for an absent player).

    >>> from pontoon.round import Round
    >>> from pontoon.rules import load_rules
    >>> from pontoon.shoe import ScriptedCards
    >>> rules = load_rules("nz-blackjack", {"interrupted": "void"})
    >>> interrupted_rule(Round(rules, ScriptedCards([])))
    '15.8 (assumed: interrupted=void)'
    """
    policy = rnd.rules.interrupted
    base = rnd.book_rule("16.6" if policy == "complete" else "16.5")
    return f"{base} (assumed: interrupted={policy})"


def rule_of(rnd: DealerSteps, op: Irregularity) -> str:
    """The rule that governs ``op`` under the round's rule book; refused when there is none."""
    if op.kind in INTERRUPTED:
        if rnd.rules.interrupted == "resume":
            raise IllegalAction(
                op.kind,
                op.box,
                "16.5 (assumed)",
                "the rule set resumes an interrupted round (interrupted = resume)",
            )
        return interrupted_rule(rnd)
    books = PROCEDURES.get(op.kind)
    if books is None:
        raise IllegalAction(
            op.kind, op.box, "16", f"unknown procedure; one of {', '.join(PROCEDURES)}"
        )
    entry = books.get(rnd.rules.rule_book)
    if entry is None:
        other = next(iter(books.values()))[0]
        raise IllegalAction(
            op.kind, op.box, other, f"the {rnd.rules.rule_book} rules have no such procedure"
        )
    return entry[0]


def _refuse(op: Irregularity, rule: str, reason: str) -> IllegalAction:
    return IllegalAction(op.kind, op.box, rule, reason)


def check(rnd: DealerSteps, op: Irregularity) -> None:
    """Raise :class:`IllegalAction` naming the rule unless ``op`` may be applied now: who
    applies it, when, on which box — the conditions every procedure shares — then the
    procedure's own (:data:`_CHECKS`)."""
    rule = rule_of(rnd, op)
    if op.kind in INTERRUPTED:
        _check_interrupted(rnd, op, rule)
        return
    supervisor_only = PROCEDURES[op.kind][rnd.rules.rule_book][1]
    if op.by not in ROLES:
        raise _refuse(op, rule, "only the dealer or a supervisor applies a procedure")
    if supervisor_only and op.by != Role.SUPERVISOR:
        raise _refuse(op, rule, "a supervisor applies this procedure")
    if rnd.phase == Phase.BETTING:
        raise _refuse(op, rule, "the cards have not been dealt")
    box = rnd.boxes.get(op.box) if op.box is not None else None
    if op.box is not None and box is None:
        raise _refuse(op, rule, "the box holds no wager")
    if op.kind in IN_PLAY_ONLY and rnd.phase not in (Phase.PLAYING, Phase.INSURANCE):
        raise _refuse(op, rule, "the round is over")
    if rnd.choosing and op.kind != P.DAMAGED:
        raise _refuse(op, "15.5", "the seated players first choose to void or complete")
    own = _CHECKS.get(P(op.kind))
    if own is not None:
        own(rnd, op, box, rule)


def _check_interrupted(rnd: DealerSteps, op: Irregularity, rule: str) -> None:
    """The policy's procedures: by the policy, on the whole round, once, while it is in play
    (a 15.5 choice still open included: the policy takes it too)."""
    if op.by != Role.POLICY:
        raise _refuse(op, rule, "the table's interrupted-round policy applies this, not a person")
    if op.box is not None or op.hand is not None or op.player is not None or op.card is not None:
        raise _refuse(op, rule, "the policy applies to the whole round")
    if rnd.phase == Phase.BETTING:
        raise _refuse(op, rule, "the cards have not been dealt")
    if rnd.phase == Phase.OVER:
        raise _refuse(op, rule, "the round is over")
    if any(e.kind == EventKind.IRREGULARITY and e.detail in INTERRUPTED for e in rnd.events):
        raise _refuse(op, rule, "the policy has already taken the round over")


# procedures applied only while the round is in play
IN_PLAY_ONLY: Final = (
    P.DRAWN_UNEXPOSED,
    P.RECONSTRUCT,
    P.VOID,
    P.ABSENT,
    P.EXPOSED_CARD,
    P.DEALER_FIRST_CARD_OMITTED,
)
Check = Callable[[DealerSteps, Irregularity, Box | None, str], None]


def _check_exposed_to_dealer(
    rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str
) -> None:
    if rnd.rules.rule_book == "pontoon" and rnd.phase != Phase.OVER and not rnd.reconstructed:
        raise _refuse(op, rule, "only once the dealer's hand is completed")


def _check_exposed_card(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if rnd.exposed is not None:
        raise _refuse(op, rule, "an exposed card is already being offered")
    if rnd.phase != Phase.PLAYING or rnd.current() is None:
        raise _refuse(op, rule, "no hand is in play to be offered the card")


def _check_reconstruct(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if rnd.rules.rule_book == "blackjack" and box is not None and any(h.acted for h in box.hands):
        raise _refuse(op, rule, "a decision has been made on the hand: it is void instead")


def _check_void(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if box is not None and op.hand is not None and not 0 <= op.hand < len(box.hands):
        raise _refuse(op, rule, f"box {box.number} has no hand {op.hand}")


def _check_absent(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    cur = rnd.current()
    if cur is None or rnd.follow_ups is not None or (box is not None and cur[0] is not box):
        raise _refuse(op, rule, "only the box in turn can be drawn for an absent player")


def _check_shoe_exhausted(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if not isinstance(rnd.source, ScriptedCards):
        raise _refuse(op, rule, "a real shoe shuffles the discard rack itself when it runs out")


def _check_damaged(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    try:
        card = Card.parse(op.card or "")
    except InputError:
        raise _refuse(op, rule, f"name the damaged card, not {op.card!r}") from None
    if card not in deck(rnd.rules.deck):
        raise _refuse(op, rule, f"a {rnd.rules.deck} deck has no {card.code}")


def _check_missed_reshuffle(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if isinstance(rnd.source, Shoe) and not rnd.source.cut_reached:
        raise _refuse(op, rule, "the cutting card has not come out")


def _check_missed_insurance(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if box is None or op.player not in box.players:
        raise _refuse(op, rule, "name the box and a player with a wager on it")
    if not (rnd.rules.insurance and rnd.dealer and rnd.dealer[0].is_ace):
        raise _refuse(op, "10", "no insurance was due to be offered")
    if len(rnd.dealer) != 1 or rnd.hole is not None:
        raise _refuse(op, rule, "noticed after the dealer's second card")
    if op.player in box.insurance or op.player in box.declined_insurance:
        raise _refuse(op, rule, f"{op.player} has already decided on insurance")


def _check_missed_surrender(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if box is None:
        raise _refuse(op, rule, "name the box")
    hand = box.hands[0]
    if len(rnd.dealer) != 1 or rnd.hole is not None:
        raise _refuse(op, rule, "noticed after the dealer's second card")
    if (
        len(box.hands) != 1
        or len(hand.cards) != 2
        or hand.state not in (HandState.OPEN, HandState.STOOD)
    ):
        raise _refuse(op, rule, "noticed after further cards were dealt to the hand")
    up = rnd.dealer[0]
    if rnd.rules.surrender == "none" or (
        rnd.rules.surrender == "void-on-pontoon" and not (up.is_ace or up.value == 10)
    ):
        raise _refuse(op, "9.3", "no surrender was due to be offered")


def _check_dealer_omitted(rnd: DealerSteps, op: Irregularity, box: Box | None, rule: str) -> None:
    if not rnd.dealer_card_omitted:
        raise _refuse(op, rule, "the dealer's first card was dealt")


# each procedure's own conditions (the others have none beyond the shared ones)
_CHECKS: Final[dict[Procedure, Check]] = {
    P.EXPOSED_TO_DEALER: _check_exposed_to_dealer,
    P.EXPOSED_CARD: _check_exposed_card,
    P.RECONSTRUCT: _check_reconstruct,
    P.VOID: _check_void,
    P.ABSENT: _check_absent,
    P.SHOE_EXHAUSTED: _check_shoe_exhausted,
    P.DAMAGED: _check_damaged,
    P.MISSED_RESHUFFLE: _check_missed_reshuffle,
    P.MISSED_INSURANCE: _check_missed_insurance,
    P.MISSED_SURRENDER: _check_missed_surrender,
    P.DEALER_FIRST_CARD_OMITTED: _check_dealer_omitted,
}


def apply(rnd: DealerSteps, op: Irregularity) -> None:
    """Apply ``op``, which :func:`check` has allowed, to the round (through
    :meth:`Round.apply_irregularity`, which undoes it should it fail part-way): the card it
    takes, if any (:data:`_CARDS`), its event, then what it does (:data:`_EFFECTS`)."""
    rule = rule_of(rnd, op)
    kind = P(op.kind)
    take = _CARDS.get(kind)
    card = take(rnd, op) if take is not None else None
    rnd.emit(
        EventKind.IRREGULARITY,
        box=op.box,
        hand=op.hand,
        player=op.player,
        card=card.code if card else None,
        detail=kind,
        rule=rule,
        by=op.by,
    )
    effect = _EFFECTS.get(kind)
    if effect is not None:
        effect(rnd, op, rule, card)
    if rnd.over and rnd.damaged:  # noticed after the round: replaced at once
        for c in rnd.damaged:
            rnd.emit(EventKind.REPLACE, card=c.code, rule=rule)
        rnd.damaged = []


def _to_discards(rnd: DealerSteps, op: Irregularity) -> Card | None:
    card = rnd.source.draw()
    rnd.source.discard([card])
    return card


def _omitted_card(rnd: DealerSteps, op: Irregularity) -> Card | None:
    return rnd.source.draw() if _untouched(rnd) else None  # the reconstructed deal's card


# the card a procedure takes: out of the shoe (recorded in its event, for replay), or named
_CARDS: Final[dict[Procedure, Callable[[DealerSteps, Irregularity], Card | None]]] = {
    P.FACE_UP_IN_SHOE: _to_discards,
    P.EXPOSED_TO_DEALER: _to_discards,
    P.EXPOSED_CARD: lambda rnd, op: rnd.source.draw(),
    P.DAMAGED: lambda rnd, op: Card.parse(op.card or ""),
    P.DEALER_FIRST_CARD_OMITTED: _omitted_card,
}

Effect = Callable[[DealerSteps, Irregularity, str, Card | None], None]


def _expose(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    rnd.exposed = card


def _reconstructed(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    rnd.reconstructed = True


def _damaged(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    assert card is not None
    rnd.damaged.append(card)


def _reshuffle_after(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    rnd.shuffle_after = rule


def _late_surrender(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    rnd.boxes[op.box or 0].surrender_offered_late = True


def _void(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    """16.5: the whole round void, or the hand(s) of one box; hands dealt after the error
    stand as dealt. A void wager returns exactly its stake, even one already settled."""
    if op.box is None:
        for box in rnd.order:
            rnd.void_box(box, rule)
        rnd.finish()
        return
    box = rnd.boxes[op.box]
    rnd.void_box(box, rule, None if op.hand is None else [op.hand])
    rnd.resume()


def _interrupted(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    """The interrupted-round policy: ``void`` voids the whole round as 16.5 does (every
    wager returned, even one settled); ``complete`` changes nothing here: its event records
    that the moves that follow are the policy's."""
    if rnd.rules.interrupted == "void":
        _void(rnd, Irregularity(P.VOID, op.by), rnd.book_rule("16.5"), None)


def _absent(rnd: DealerSteps, op: Irregularity, rule: str, card: Card | None) -> None:
    """16.6: cards are dealt to an absent player's hands until each totals 12 or more
    (15.9: while the hard total is 11 or less); then the hand stands."""
    cur = rnd.current()
    assert cur is not None
    box = cur[0]
    blackjack = rnd.rules.rule_book == "blackjack"
    while (cur := rnd.current()) is not None and cur[0] is box:
        hand = cur[1]
        index = rnd.hand_index
        while hand.state == HandState.OPEN and not hand.refused and not hand.doubled:
            short = hard_total(hand.cards) <= 11 if blackjack else hand.total < 12
            if not short or (hand.split_aces and not rnd.rules.hit_split_aces):
                break
            rnd.deal_card(box, index, rule)
            rnd.card_reached(box, index, hand)
        if hand.state == HandState.OPEN:
            hand.state = HandState.STOOD
        rnd.advance()


def _untouched(rnd: DealerSteps) -> bool:
    """The layout is still the initial deal: no decision, no card drawn, nothing settled."""
    return all(
        not h.acted
        and len(h.cards) == 2
        and not h.discarded
        and not any(w.settled for w in h.wagers)
        for _, _, h in rnd.hands()
    ) and all(len(b.hands) == 1 for b in rnd.order)


def _dealer_omitted(rnd: DealerSteps, op: Irregularity, rule: str, extra: Card | None) -> None:
    """15.5: before any decision the hands are reconstructed as they should have been dealt;
    after one, each seated player chooses to void or complete the hand, and an ace and a ten
    the dealer then deals himself or herself count 21 but not blackjack."""
    rnd.dealer_card_omitted = False
    if extra is None:
        rnd.dealer_blackjack = False
        rnd.choosing = [b.number for b in rnd.order]
        for i, box in enumerate(rnd.order):  # the cards stand as they fell
            rnd.settle_sevens(box, final=i < rnd.turn)
        return
    seconds = [b.hands[0].cards[1] for b in rnd.order]
    rnd.dealer = [seconds[0]]
    for box, card in zip(rnd.order, [*seconds[1:], extra], strict=True):
        hand = box.hands[0]
        hand.cards[1] = card
        box.first_cards = hand.cards[:2]
        if hand.state == HandState.NATURAL and not is_pontoon(hand.cards):
            hand.state = HandState.OPEN
    rnd.turn = rnd.hand_index = 0  # no decision was made: play starts again at box one
    for box in rnd.order:
        rnd.settle_sevens(box, final=False)
    rnd.interim_settlement()
    rnd.advance()


# what a procedure does once recorded (16.2 and 16.11 only record: the event is the effect)
_EFFECTS: Final[dict[Procedure, Effect]] = {
    P.EXPOSED_CARD: _expose,
    P.RECONSTRUCT: _reconstructed,
    P.VOID: _void,
    P.ABSENT: _absent,
    P.SHOE_EXHAUSTED: lambda rnd, op, rule, card: rnd.source.shuffle(rule),
    P.DAMAGED: _damaged,
    P.MISSED_RESHUFFLE: _reshuffle_after,
    P.MISSING_CUTTING_CARD: _reshuffle_after,
    P.MISSED_SURRENDER: _late_surrender,
    P.DEALER_FIRST_CARD_OMITTED: _dealer_omitted,
    P.ABANDONED: _interrupted,
    P.FAILURE: _interrupted,
}
