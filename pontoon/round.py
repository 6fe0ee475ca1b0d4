"""One round of Pontoon as a state machine (sections 8-15).

Ask, then act: :meth:`Round.to_act` says who must act now and on what,
:meth:`Round.legal_moves` lists what may be done (for everyone, or one player),
:meth:`Round.check` raises :class:`~pontoon.errors.IllegalAction` naming the rule that forbids
a move, and :meth:`Round.apply` either makes the move (and every automatic step after it: cards
the rules deal without a choice, interim settlement, the dealer's hand, settlement) and returns
the events it added, or changes nothing. Every change is an :class:`~pontoon.events.Event` in
:attr:`Round.events`; :meth:`Round.from_events` rebuilds a round from them (8.6).

What a hand may do is :func:`pontoon.legality.refusal`'s; the round adds what is the table's:
whose turn it is, the players behind (15.3), insurance (10), amounts, an exposed card (16.4).
The money, the settlement and the dealer's hand are :class:`~pontoon.dealer.DealerSteps`, which
the round is made of; the procedures of section 16 (:mod:`pontoon.irregularities`) act through
those public *dealer steps* and :meth:`Round.resume`, never private methods.

>>> from pontoon.cards import parse_cards
>>> from pontoon.rules import load_rules
>>> from pontoon.shoe import ScriptedCards
>>> r = Round(load_rules("nz-pontoon"), ScriptedCards(parse_cards("9S 7H KD 8C 5C")))
>>> r.place_wager(1, "ana", 1000)
>>> r.deal()
>>> r.to_act()
Turn(kind=<TurnKind.DECIDE: 'decide'>, players=('ana',), box=1, hand=0, follow=None, boxes=())
>>> [m.action.value for m in r.legal_moves("ana")]
['hit', 'stand', 'double']
>>> [e.kind.value for e in r.apply(Move(Action.STAND, 1))][:3]
['action', 'deal', 'deal']
>>> r.over, r.net("ana")              # dealer 7 8 5 = 20 beats 19
(True, -1000)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from enum import Enum
from typing import Final

from pontoon import irregularities
from pontoon.cards import Card
from pontoon.dealer import (
    ACTION_EVENT,
    BETTING,
    BURN,
    DEAL,
    HOLE,
    INSURANCE,
    IRREGULARITY,
    NATURAL,
    OPEN,
    OVER,
    PLAYING,
    RULES_EVENT,
    SETTLED,
    SHUFFLE,
    STOOD,
    SUPER,
    SURRENDER_OUTCOME,
    SURRENDERED,
    WAGER,
    DealerSteps,
)
from pontoon.errors import IllegalAction, InputError
from pontoon.events import Event, upgraded
from pontoon.hand import is_pair, total
from pontoon.irregularities import DRAWING, Irregularity
from pontoon.layout import Box, FollowChoice, FollowUps, Hand, Move, Turn, Wager
from pontoon.legality import Facts, refusal
from pontoon.money import dollars
from pontoon.rules import RuleSet, rules_from_dict, rules_json
from pontoon.settlement import winnings
from pontoon.shoe import CardSource, ScriptedCards, ShoeEmpty, ShoeNote
from pontoon.vocab import (
    ACTION_OF,
    AMOUNT_ACTIONS,
    CHOICE_ACTIONS,
    FOLLOW_ACTIONS,
    HAND_ACTIONS,
    INSURANCE_ACTIONS,
    SEATED_ACTIONS,
    SEVENS,
    Action,
    DealerStep,
    EventKind,
    Follow,
    Procedure,
    Role,
    TurnKind,
    action_of,
)

ACTIONS: Final = tuple(Action)

HIT, STAND, DOUBLE, SPLIT, SURRENDER, RESCUE, REFUSE = SEATED_ACTIONS
DECLINE, INSURE, NO_INSURANCE = Action.DECLINE, Action.INSURE, Action.NO_INSURANCE
OMITTED_IN_DEAL: Final = Procedure.OMITTED_IN_DEAL
_SETTLED_STATES: Final = (NATURAL, SUPER, SETTLED, SURRENDERED)
_make_facts = tuple.__new__


class Route(Enum):
    """Which part of the rules a move falls under: decided once, for both its check and its
    making."""

    INSURANCE = "insurance"  # 10
    CHOICE = "choice"  # 15.5
    LATE_SURRENDER = "late-surrender"  # 16.12: a missed surrender offer, taken out of turn
    FOLLOW = "follow"  # 15.3(c), (d): a player behind
    SEATED = "seated"  # the seated player's decision on the hand in play


_ACTION_RULE: Final = {
    HIT: "14.1",
    STAND: "8.3",
    DOUBLE: "12",
    SPLIT: "13",
    SURRENDER: "9.3",
    RESCUE: "12",
    REFUSE: "16.4",
}

_make_event = tuple.__new__


def _whole(x: object) -> bool:
    """An amount of money: a whole number of minor units (and not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool)


class Round(DealerSteps):
    """A round on ``rules`` dealt from ``source``. Place wagers, :meth:`deal`, then
    :meth:`apply` moves until :attr:`over`."""

    # The round's state: what a refused move puts back (:meth:`_adopt`), field by field.
    STATE: Final = (
        "phase",
        "boxes",
        "order",
        "dealer",
        "hole",
        "turn",
        "hand_index",
        "follow_ups",
        "balance",
        "table",
        "house",
        "exposed",
        "dealer_card_omitted",
        "dealer_blackjack",
        "choosing",
        "shuffle_after",
        "damaged",
        "reconstructed",
        "decided_by",
        "events",
    )
    # the state: DealerSteps.__slots__, and who makes the players' moves when not they
    __slots__ = ("_checked", "decided_by")

    def __init__(self, rules: RuleSet, source: CardSource) -> None:
        self.rules = rules
        self.source = source
        self.phase = BETTING
        self.boxes: dict[int, Box] = {}
        self.order: list[Box] = []  # boxes with wagers, dealer's left first (8.2, 8.3)
        self.dealer: list[Card] = []
        self.hole: Card | None = None  # peek game: the dealer's face-down card
        self.turn = 0  # index into order of the box in play
        self.hand_index = 0
        self.follow_ups: FollowUps | None = None
        self.balance: dict[str, int] = {}  # each player's money change in this round
        self.table = 0  # money on the layout
        self.house = 0  # the house's money change
        self.exposed: Card | None = None  # 16.4: a card drawn in error, exposed, dealt next
        self.dealer_card_omitted = False  # 15.5: the dealer dealt no first card
        self.dealer_blackjack = True  # 15.5: after the omission an ace and ten count 21 only
        self.choosing: list[int] = []  # 15.5: boxes whose seated player chooses void/complete
        self.shuffle_after: str | None = None  # 16.9, 16.10: reshuffle when the round ends
        self.damaged: list[Card] = []  # 16.8: replaced at the end of the round
        self.reconstructed = False  # 16.3: a reconstruction has been completed
        # Who makes every move from now on, when not its player: the interrupted-round policy
        # (``Role.POLICY``) once it has taken the round over; its action events say so (``by``).
        self.decided_by: str | None = None
        self.events: list[Event] = [Event(RULES_EVENT, detail=rules_json(rules), rule=rules.name)]
        source.listener = self._shoe_event
        # The last move checked, the log's length then and the check's result: "ask, then
        # act" checks a move once (every change of the round adds an event).
        self._checked: tuple[Move, int, tuple[Route, Move, Box, str]] | None = None

    # ================================================================== the query API
    def net(self, player: str) -> int:
        """What ``player`` has won (positive) or lost in this round so far."""
        return self.balance.get(player, 0)

    @property
    def players(self) -> list[str]:
        return list(self.balance)

    @property
    def natural_word(self) -> str:
        """What the table calls a natural: ``pontoon`` or ``blackjack``."""
        return self.rules.natural_word

    def cards_on_layout(self) -> list[Card]:
        """Cards dealt this round and not yet in the discard rack."""
        out = [c for _, _, h in self.hands() if not h.discarded for c in h.cards]
        if self.phase is not OVER:
            out += self.dealer
            if self.hole is not None:
                out.append(self.hole)
        if self.exposed is not None:
            out.append(self.exposed)
        return out

    def to_act(self) -> Turn | None:
        """Who must act now and on what; None when the round is over (or, after a procedure,
        waits for nobody)."""
        if self.phase is OVER:
            return None
        if self.phase is BETTING:
            players = sorted({p for b in self.boxes.values() for p in b.players})
            return Turn(TurnKind.BETTING, tuple(players))
        if self.choosing:
            seated = tuple(self.boxes[n].seated for n in self.choosing)
            return Turn(TurnKind.CHOOSE, seated, boxes=tuple(self.choosing))
        if self.phase is INSURANCE:
            players = sorted({p for _, p in self._insurance_waiting()})
            return Turn(TurnKind.INSURANCE, tuple(players))
        fu = self.follow_ups
        if fu is not None:
            box = self.order[self.turn]
            return Turn(TurnKind.FOLLOW, tuple(fu.waiting), box.number, fu.hand, fu.kind)
        cur = self.current()
        if cur is not None:
            return Turn(TurnKind.DECIDE, (cur[0].seated,), cur[0].number, self.hand_index)
        return None

    def player_of(self, move: Move) -> str:
        """Who makes ``move``: its player, or the seated player of its box."""
        if move.player is not None:
            return move.player
        box = self.boxes.get(move.box)
        return box.seated if box is not None else ""

    def legal_moves(self, player: str | None = None) -> list[Move]:
        """Every move that may be made now (amounts at their largest); with ``player``, only
        that player's."""
        out: list[Move] = []
        if self.choosing:
            out = [Move(a, n) for n in self.choosing for a in CHOICE_ACTIONS]
        else:
            self._legal_into(out)
        if player is None:
            return out
        return [m for m in out if self.player_of(m) == player]

    def _legal_into(self, out: list[Move]) -> None:
        cur = self.current()
        for box in self.order:
            late = Move(SURRENDER, box.number)
            if box.surrender_offered_late and (cur is None or cur[0] is not box) and self.can(late):
                out.append(late)
        if self._insurance_window():
            for box, player in self._insurance_waiting():
                out.append(Move(INSURE, box.number, player=player))
                out.append(Move(NO_INSURANCE, box.number, player=player))
        fu = self.follow_ups
        if fu is not None:
            number = self.order[self.turn].number
            for p in fu.waiting:
                if fu.kind is DOUBLE:
                    out.append(Move(DOUBLE, number, player=p))
                else:
                    out += [Move(SPLIT, number, player=p, follow=f) for f in (Follow.BOTH, 0, 1)]
                out.append(Move(DECLINE, number, player=p))
            return
        if cur is not None:
            box, hand = cur
            facts = self.facts(box, hand)
            rules = self.rules
            for a in HAND_ACTIONS:
                if refusal(a, facts, rules) is None:
                    out.append(Move(a, box.number))
            if self.exposed is not None:
                out.append(Move(REFUSE, box.number))

    def stake_of(self, move: Move) -> int:
        """The money ``move`` takes from its player's balance (a double, a split, a player
        behind covering both hands of a split, insurance); 0 for any other move."""
        action = move.action
        box = self.boxes.get(move.box)
        if box is None:
            return 0
        player = self.player_of(move)
        if action is INSURE:
            return move.amount if move.amount is not None else self.insurable(box.number, player)
        if action is not DOUBLE and action is not SPLIT:
            return 0
        if move.player is None or player == box.seated:
            cur = self.current()
            hand = cur[1] if cur is not None and cur[0] is box else box.hands[0]
        else:
            fu = self.follow_ups
            hand = box.hands[fu.hand if fu is not None else 0]
            if action is SPLIT and move.follow not in (None, Follow.BOTH):
                return 0
        if move.amount is not None:
            return move.amount
        w = hand.wager_of(player)
        return w.stake if w is not None else 0

    def insurable(self, box_number: int, player: str) -> int:
        """The most ``player`` may insure on the box now: a part (half) of the original wager
        (10); 0 when the player has decided already or has no wager in play there."""
        box = self.boxes.get(box_number)
        if box is None or player in box.insurance or player in box.declined_insurance:
            return 0
        if player not in box.original:
            return 0
        live = any(w.player == player and not w.settled for h in box.hands for w in h.wagers)
        if not live:
            return 0
        return winnings(box.original[player], self.rules.insurance_max)

    def facts(self, box: Box, hand: Hand) -> Facts:
        """What the rules read of ``hand`` on ``box`` (:func:`pontoon.legality.refusal`)."""
        cards = hand.cards
        n = len(cards)
        # Built as a plain tuple: the named tuple's own constructor costs as much again.
        return _make_facts(
            Facts,
            (
                n,
                total(cards),
                n == 2 and is_pair(cards[0], cards[1], self.rules.split_by),
                hand.from_split,
                hand.split_aces,
                hand.doubled,
                len(box.hands),
                hand.acted,
                self.dealer[0].value if self.dealer else 0,
                hand.refused,
                hand.state in _SETTLED_STATES or True in [w.settled for w in hand.wagers],
                box.surrender_offered_late,
            ),
        )

    # ================================================================== dealer steps
    def resume(self) -> None:
        """Go on after a procedure changed the layout: close an insurance phase nobody is left
        to decide, or run the automatic steps to the next decision."""
        if self.phase is INSURANCE and not self._insurance_waiting():
            self._close_insurance()
        else:
            self.advance()

    def checkpoint(self) -> tuple[int, object]:
        """A mark to come back to with :meth:`rewind`: the log's length and the cards'."""
        return len(self.events), self.source.checkpoint()

    def rewind(self, mark: tuple[int, object]) -> None:
        """Back to ``mark`` (:meth:`checkpoint`): the round and its cards as they were then,
        for a change that was made here but that the record refused (a wallet's refusal)."""
        n, cards = mark
        self._adopt(Round.from_events(self.events[:n]))
        self.source.rollback(cards)

    def continue_with(self, source: CardSource) -> None:
        """Deal the rest of the round from ``source`` (the table's shoe, restored after a
        restart): a round rebuilt from its log goes on where it stopped (16.5)."""
        self.source = source
        source.listener = self._shoe_event

    # ================================================================== events and money
    def _shoe_event(self, kind: str, rule: str, card: Card | None, detail: str | None) -> None:
        self.emit(EventKind(kind), rule=rule, card=card.code if card else None, detail=detail)

    def ready_shoe(self) -> None:
        """Shuffle the shoe now, before any wager, when the round will shuffle it (7, 8.7,
        8.8): the new shoe's commitment is then recorded, and shown, before the bets and
        before any card is dealt from it (the table server does this as a round opens).
        The deal then finds the shoe ready."""
        if self.phase is not BETTING:
            raise IllegalAction("deal", None, "8.2", "the cards are already dealt")
        self.source.start_round()

    # ================================================================== wagers
    def check_wager(self, box_number: int, player: str, amount: int) -> None:
        """Raise :class:`IllegalAction` unless ``player`` may wager ``amount`` on the box."""
        r = self.rules
        if self.phase is not BETTING:
            raise IllegalAction(WAGER, box_number, "8.2", "no bets after 'No more bets'")
        if not 1 <= box_number <= r.boxes:
            raise IllegalAction(WAGER, box_number, "15", f"the layout has boxes 1 to {r.boxes}")
        if not player or not isinstance(player, str):
            raise IllegalAction(WAGER, box_number, "15.3", "a wager needs a player's name")
        if not _whole(amount):
            raise IllegalAction(WAGER, box_number, "5", "amounts are whole minor units")
        box = self.boxes.get(box_number)
        mine = box.original.get(player, 0) if box else 0
        if amount < r.table_min:
            raise IllegalAction(
                WAGER,
                box_number,
                "15.6",
                f"each wager must be at least the minimum {dollars(r.table_min)}",
            )
        if mine + amount > r.table_max:
            raise IllegalAction(
                WAGER,
                box_number,
                "15.2",
                f"the wager of {player} would exceed the maximum {dollars(r.table_max)}",
            )
        if box and player not in box.players and len(box.players) >= r.players_per_box:
            raise IllegalAction(
                WAGER, box_number, "15.1", f"at most {r.players_per_box} players may wager on a box"
            )
        on_box = sum(box.original.values()) if box else 0
        if r.box_max and on_box + amount > r.box_max:
            raise IllegalAction(
                WAGER, box_number, "15.2", f"the box maximum is {dollars(r.box_max)}"
            )
        boxes = {b.number for b in self.boxes.values() if player in b.original}
        if box_number not in boxes and len(boxes) >= r.boxes_per_player:
            raise IllegalAction(
                WAGER,
                box_number,
                "15.4",
                f"a player may wager on at most {r.boxes_per_player} boxes",
            )

    def place_wager(self, box_number: int, player: str, amount: int) -> None:
        """Put ``amount`` on a box for ``player``; the first player on a box is seated there."""
        self.check_wager(box_number, player, amount)
        box = self.boxes.get(box_number)
        if box is None:
            box = self.boxes[box_number] = Box(box_number, [player], {})
        if player not in box.players:
            box.players.append(player)
        box.original[player] = box.original.get(player, 0) + amount
        self.emit(WAGER, box=box_number, player=player, amount=amount, rule="8.2")
        self._stake(box, None, player, amount, "8.2")

    def check_side_wager(self, box_number: int, player: str, amount: int) -> None:
        """Raise :class:`IllegalAction` unless ``player`` may make a Super Sevens wager."""
        r = self.rules
        if not r.super_sevens:
            raise IllegalAction(SEVENS, box_number, "Super Sevens", "not offered here")
        if self.phase is not BETTING:
            raise IllegalAction(SEVENS, box_number, "8.2", "no bets after 'No more bets'")
        box = self.boxes.get(box_number)
        if box is None or player not in box.players:
            raise IllegalAction(
                SEVENS, box_number, "Super Sevens", f"{player} has no wager on this box"
            )
        if player in box.sevens:
            raise IllegalAction(SEVENS, box_number, "Super Sevens", "one wager a player")
        if not _whole(amount) or not r.super_sevens_min <= amount <= r.super_sevens_max:
            raise IllegalAction(
                SEVENS,
                box_number,
                "Super Sevens",
                f"the wager must be {dollars(r.super_sevens_min)} to {dollars(r.super_sevens_max)}",
            )

    def place_side_wager(self, box_number: int, player: str, amount: int) -> None:
        """A Super Sevens wager (Blackjack 1996) beside ``player``'s wager on the box."""
        self.check_side_wager(box_number, player, amount)
        box = self.boxes[box_number]
        box.sevens[player] = Wager(player, amount)
        self.emit(WAGER, box=box_number, player=player, amount=amount, detail=SEVENS, rule=SEVENS)
        self._stake(box, None, player, amount, SEVENS)

    # ================================================================== the deal
    def deal(self, omit_dealer_card: bool = False) -> None:
        """'No more bets' and the initial deal (8.2), then interim settlement (9.1) and the
        automatic steps up to the first decision.
        ``omit_dealer_card`` records a deal in which the dealer gave himself or herself no
        first card (Blackjack 15.5)."""
        if self.phase is not BETTING:
            raise IllegalAction("deal", None, "8.2", "the cards are already dealt")
        if not self.boxes:
            raise IllegalAction("deal", None, "8.2", "no box holds a wager")
        if omit_dealer_card and (self.rules.rule_book != "blackjack" or self.rules.dealer_peeks):
            raise IllegalAction(
                "deal", None, "15.5", "an omitted first card is a Blackjack no-hole-card procedure"
            )
        self._atomically("deal", None, self._deal_round, omit_dealer_card)

    def _deal_round(self, omit_dealer_card: bool) -> None:
        self.source.start_round()
        self.order = [self.boxes[n] for n in sorted(self.boxes)]
        for box in self.order:
            box.hands = [Hand([], [Wager(p, box.original[p]) for p in box.players])]
        self.emit(ACTION_EVENT, detail=DealerStep.NO_MORE_BETS, rule="8.2")
        for box in self.order:
            self.deal_card(box, 0, "8.2(a)")
        if omit_dealer_card:
            self.dealer_card_omitted = True
            self.emit(IRREGULARITY, detail=OMITTED_IN_DEAL, rule="15.5", by=Role.DEALER)
        else:
            self.deal_card(None, 0, "8.2(b)")
        for box in self.order:
            self.deal_card(box, 0, "8.2(c)")
        if self.rules.dealer_peeks:
            self.hole = self.exposed if self.exposed is not None else self.source.draw()
            self.exposed = None
            self.emit(HOLE, card=self.hole.code, rule="8.5")
        self.phase = PLAYING
        if self.rules.dealer_peeks:
            if self._insurance_offered() and self._insurance_waiting():
                self.phase = INSURANCE
                return
            self._peek()
            if self.over:
                return
        self.interim_settlement()
        self.advance()

    # ================================================================== insurance
    def _insurance_offered(self) -> bool:
        return self.rules.insurance and bool(self.dealer) and self.dealer[0].is_ace

    def _insurance_window(self) -> bool:
        if not self._insurance_offered() or self.phase is OVER:
            return False
        if self.rules.dealer_peeks:
            return self.phase is INSURANCE
        return self.phase is PLAYING and len(self.dealer) == 1

    def _insurance_waiting(self) -> list[tuple[Box, str]]:
        return [(b, p) for b in self.order for p in b.players if self.insurable(b.number, p)]

    def _check_insurance(self, move: Move, box: Box | None, player: str) -> None:
        action = move.action
        if move.hand is not None:
            raise IllegalAction(action, move.box, "10", "insurance is on the box")
        if not self._insurance_offered():
            raise IllegalAction(
                action, move.box, "10", "insurance is offered only against a dealer ace"
            )
        if not self._insurance_window():
            raise IllegalAction(
                action, move.box, "16.11", "insurance closed with the dealer's second card"
            )
        if box is None or player not in box.players:
            raise IllegalAction(action, move.box, "15.3(f)", f"{player} has no wager on this box")
        if player in box.insurance or player in box.declined_insurance:
            raise IllegalAction(
                action, move.box, "10", f"{player} has already decided on insurance"
            )
        most = self.insurable(box.number, player)
        if not most:
            raise IllegalAction(action, move.box, "10", f"the wager of {player} is already settled")
        if action is INSURE:
            amount = most if move.amount is None else move.amount
            if not _whole(amount) or not 1 <= amount <= most:
                raise IllegalAction(
                    action, move.box, "10", f"insurance may be 1 to {most} (half the wager)"
                )

    def _insure(self, move: Move, box: Box, player: str) -> None:
        if move.action is INSURE:
            amount = move.amount if move.amount is not None else self.insurable(box.number, player)
            self.emit(
                ACTION_EVENT,
                box=box.number,
                player=player,
                detail=INSURE,
                amount=amount,
                rule="10",
                by=self.decided_by,
            )
            box.insurance[player] = Wager(player, amount)
            self._stake(box, None, player, amount, "10")
        else:
            self.emit(
                ACTION_EVENT,
                box=box.number,
                player=player,
                detail=NO_INSURANCE,
                rule="10",
                by=self.decided_by,
            )
            box.declined_insurance.add(player)
        if self.phase is INSURANCE and not self._insurance_waiting():
            self._close_insurance()

    def _close_insurance(self) -> None:
        self.phase = PLAYING
        self._peek()
        if not self.over:
            self.interim_settlement()
            self.advance()

    # ================================================================== the peek game

    # ================================================================== checking moves
    def check(self, move: Move) -> None:
        """Raise :class:`IllegalAction` naming the rule unless ``move`` is legal now."""
        self._checked = (move, len(self.events), self._routed(move))

    def can(self, move: Move) -> bool:
        """Whether ``move`` is legal now."""
        try:
            self.check(move)
        except IllegalAction:
            return False
        return True

    def _routed(self, move: Move) -> tuple[Route, Move, Box, str]:
        """Check ``move`` and say which route it takes, on which box, for which player (and
        the move with its action as an :class:`~pontoon.vocab.Action`)."""
        action = ACTION_OF.get(move.action)
        if action is None:
            raise IllegalAction(
                move.action, move.box, "8.3", f"unknown action; one of {', '.join(ACTIONS)}"
            )
        if move.action is not action:  # given as a plain word
            move = replace(move, action=action)
        if move.amount is not None and action not in AMOUNT_ACTIONS:
            rule = "10" if action is NO_INSURANCE else _ACTION_RULE.get(action, "8.3")
            raise IllegalAction(action, move.box, rule, f"a {action} takes no amount")
        if move.follow is not None and action is not SPLIT:
            raise IllegalAction(action, move.box, "15.3(d)", "only a split is followed")
        box = self.boxes.get(move.box)
        cur = self.current()
        if (
            cur is not None
            and cur[0] is box
            and move.player is None
            and move.hand is None
            and move.follow is None
            and action in HAND_ACTIONS
            and self.follow_ups is None
            and not self.choosing
        ):  # the seated player's decision on the hand in turn: only the hand's own rules apply
            self._check_hand(move, box, cur[1])
            return Route.SEATED, move, box, box.seated
        if action in INSURANCE_ACTIONS:
            player = move.player or (box.seated if box else "")
            self._check_insurance(move, box, player)
            assert box is not None
            return Route.INSURANCE, move, box, player
        if self.phase is BETTING:
            raise IllegalAction(action, move.box, "8.2", "the cards have not been dealt")
        if box is None:
            raise IllegalAction(action, move.box, "8.2", "the box holds no wager")
        player = move.player or box.seated
        if self.choosing or action in CHOICE_ACTIONS:
            self._check_choice(move, box, player)
            return Route.CHOICE, move, box, player
        if (
            action is SURRENDER
            and box.surrender_offered_late
            and player == box.seated
            and (cur is None or cur[0] is not box)
        ):  # 16.12: a missed surrender offer, taken out of turn
            self._check_hand(move, box, box.hands[0])
            return Route.LATE_SURRENDER, move, box, player
        if player != box.seated and self.phase is PLAYING:
            self._check_follow_up(move, box, player)
            return Route.FOLLOW, move, box, player
        self._check_seated(move, box, player, cur)
        return Route.SEATED, move, box, player

    def _check_seated(
        self, move: Move, box: Box, player: str, cur: tuple[Box, Hand] | None
    ) -> None:
        action = move.action
        if self.phase is INSURANCE:
            raise IllegalAction(
                action, move.box, "10", "insurance must be decided before the dealer peeks"
            )
        if player != box.seated:
            raise IllegalAction(action, move.box, "15.3(a)", "only the seated player decides")
        if move.follow is not None:
            raise IllegalAction(action, move.box, "15.3(d)", "the seated player follows no hand")
        fu = self.follow_ups
        if fu is not None:
            raise IllegalAction(
                action,
                move.box,
                "15.3(c)" if fu.kind is DOUBLE else "15.3(d)",
                f"{', '.join(fu.waiting)} on box {self.order[self.turn].number} must first "
                f"choose whether to {fu.kind}",
            )
        in_turn = cur is not None and cur[0] is box
        index = move.hand if move.hand is not None else (self.hand_index if in_turn else 0)
        if cur is None or not in_turn or index != self.hand_index:
            # Not this hand's turn: say why the hand itself cannot take the move, if it can't.
            if 0 <= index < len(box.hands) and action in SEATED_ACTIONS:
                self._check_hand(move, box, box.hands[index])
            if cur is None:
                raise IllegalAction(action, move.box, "8.6", "the round is over")
            if not in_turn:
                raise IllegalAction(action, move.box, "8.3", f"box {cur[0].number} is to act first")
            raise IllegalAction(
                action, move.box, "13.5", f"hand {self.hand_index} is in play, not hand {index}"
            )
        if action is DECLINE:
            raise IllegalAction(action, move.box, "15.3(e)", "only a player behind may decline")
        self._check_hand(move, box, cur[1])

    def _check_hand(self, move: Move, box: Box, hand: Hand) -> None:
        """The seated player's decision on ``hand``: the hand's facts (legality), then what
        is the table's (an exposed card to refuse, the amounts)."""
        action = move.action
        if action is REFUSE:
            if self.exposed is None:
                raise IllegalAction(
                    REFUSE, box.number, self.book_rule("16.4"), "no card is exposed"
                )
            return
        no = refusal(action, self.facts(box, hand), self.rules)
        if no is not None:
            raise IllegalAction(action, box.number, no.rule, no.reason)
        if action is DOUBLE:
            self._check_double_amount(move, box, hand.wager_of(box.seated))
        elif action is SPLIT and move.amount is not None:
            raise IllegalAction(SPLIT, box.number, "13", "a split takes a wager equal to the first")

    def _check_choice(self, move: Move, box: Box, player: str) -> None:
        """15.5: after the dealer's omitted first card is noticed, each seated player chooses
        to void the hand or complete it, before anything else happens."""
        if move.action not in CHOICE_ACTIONS:
            raise IllegalAction(
                move.action,
                move.box,
                "15.5",
                f"the seated players of boxes {', '.join(map(str, self.choosing))} first choose "
                "to void or complete their hands",
            )
        if box.number not in self.choosing:
            raise IllegalAction(move.action, move.box, "15.5", "the box has no choice to make")
        if player != box.seated:
            raise IllegalAction(move.action, move.box, "15.5", "the seated player chooses")

    def _check_double_amount(self, move: Move, box: Box, w: Wager | None) -> None:
        if w is None:
            raise IllegalAction(
                DOUBLE, box.number, "15.3(c)", f"{move.player} has no wager on this hand"
            )
        amount = w.stake if move.amount is None else move.amount
        if not _whole(amount) or not 1 <= amount <= w.stake:
            raise IllegalAction(
                DOUBLE, box.number, "12", f"a double may be 1 to {w.stake} (the wager on the hand)"
            )

    def _check_follow_up(self, move: Move, box: Box, player: str) -> None:
        fu = self.follow_ups
        action = move.action
        if player not in box.players:
            raise IllegalAction(
                action, move.box, "15.3", f"{player} has no wager on box {box.number}"
            )
        if action not in FOLLOW_ACTIONS:
            raise IllegalAction(
                action, move.box, "15.3(a)", "only the seated player decides for the box"
            )
        if fu is None or self.order[self.turn] is not box:
            raise IllegalAction(
                action, move.box, "15.3(e)", "the seated player has not doubled or split"
            )
        if action is not DECLINE and action is not fu.kind:
            raise IllegalAction(
                action, move.box, "15.3(e)", f"the seated player chose to {fu.kind}, not {action}"
            )
        if player not in fu.waiting:
            raise IllegalAction(action, move.box, "15.3", f"{player} has no choice to make here")
        if move.hand is not None and move.hand != fu.hand:
            raise IllegalAction(action, move.box, "15.3", f"hand {fu.hand} is in play")
        hand = box.hands[fu.hand]
        if action is DOUBLE:
            if move.follow is not None:
                raise IllegalAction(DOUBLE, move.box, "15.3(c)", "a double follows no hand")
            self._check_double_amount(move, box, hand.wager_of(player))
        elif action is SPLIT:
            if isinstance(move.follow, bool) or move.follow not in (Follow.BOTH, 0, 1, None):
                raise IllegalAction(SPLIT, move.box, "15.3(d)", "follow 'both', 0 or 1")
            if move.amount is not None:
                raise IllegalAction(
                    SPLIT, move.box, "15.3(d)", "covering both hands takes an equal wager"
                )
        elif move.follow is not None or move.amount is not None:
            raise IllegalAction(DECLINE, move.box, "15.3(e)", "a decline takes no amount")

    # ================================================================== irregularities
    def check_irregularity(self, op: Irregularity) -> None:
        """Raise :class:`IllegalAction` naming the rule unless the procedure may be applied."""
        irregularities.check(self, op)

    def can_irregularity(self, op: Irregularity) -> bool:
        try:
            irregularities.check(self, op)
        except IllegalAction:
            return False
        return True

    def apply_irregularity(self, op: Irregularity) -> tuple[Event, ...]:
        """Apply a section 16 (or Blackjack 15.5-15.11) procedure and return the events it
        added, or raise and change nothing."""
        irregularities.check(self, op)
        return self._atomically(op.kind, op.box, self._procedure, op)

    def _procedure(self, op: Irregularity) -> None:
        irregularities.apply(self, op)
        if op.kind in irregularities.INTERRUPTED and not self.over:
            self.decided_by = Role.POLICY  # interrupted=complete: the policy decides now

    # ================================================================== acting
    def apply(self, move: Move) -> tuple[Event, ...]:
        """Make ``move`` and every automatic step after it and return the events they added,
        or raise and change nothing."""
        last = self._checked
        if last is not None and last[0] is move and last[1] == len(self.events):
            route, move, box, player = last[2]  # checked just now, nothing changed since
        else:
            route, move, box, player = self._routed(move)
        self._checked = None
        return self._atomically(move.action, move.box, _MAKERS[route], self, move, box, player)

    def apply_defaults(self) -> tuple[Event, ...]:
        """Take the default for every open offer: players behind decline to double and keep
        their wager on the first hand of a split (15.3); in the peek game, undecided players
        decline insurance and the dealer peeks. Each default is recorded as a move; returns
        the events added."""
        mark = len(self.events)
        if self.phase is INSURANCE:
            for box, player in self._insurance_waiting():
                self.apply(Move(NO_INSURANCE, box.number, player=player))
        while self.choosing:
            self.apply(Move(Action.COMPLETE, self.choosing[0]))
        fu = self.follow_ups
        while fu is not None and fu.waiting:
            box = self.order[self.turn]
            self.apply(Move(DECLINE, box.number, player=fu.waiting[0]))
        return tuple(self.events[mark:])

    def _atomically(
        self, action: str, box: int | None, step: Callable[..., None], *args: object
    ) -> tuple[Event, ...]:
        """Run ``step`` and return the events it added. Should it fail part-way (the last card
        of the pack gone, 16.7), put the round and the cards back as they were before it, and
        refuse it."""
        mark, cards = len(self.events), self.source.checkpoint()
        try:
            step(*args)
        except Exception as exc:
            self._adopt(Round.from_events(self.events[:mark]))
            self.source.rollback(cards)
            if isinstance(exc, ShoeEmpty):
                raise IllegalAction(
                    action,
                    box,
                    self.book_rule("16.7"),
                    "no card is left in the shoe or the discard rack: every card is on the "
                    f"layout, so the round can only be voided ({self.book_rule('16.5')})",
                ) from None
            raise
        return tuple(self.events[mark:])

    def _adopt(self, other: Round) -> None:
        """Take every field of :attr:`STATE` from ``other`` (a round rebuilt from this one's
        log); the rules and the card source stay."""
        for name in Round.STATE:
            setattr(self, name, getattr(other, name))

    def _make_seated(self, move: Move, box: Box, player: str) -> None:
        cur = self.current()
        index = self.hand_index if cur is not None and cur[0] is box else 0  # 16.12: late
        hand = box.hands[index]
        action = move.action
        rule = _ACTION_RULE[action]
        if action is REFUSE:
            rule = self.book_rule(rule)  # 16.4 (15.7)
        n, amount = box.number, move.amount  # the event as a plain tuple (see DealerSteps.emit)
        by = self.decided_by
        event = (ACTION_EVENT, n, index, player, None, amount, action, None, rule, by, None)
        self.events.append(_make_event(Event, event))
        hand.acted = True
        _ACTS[action](self, move, box, hand)
        self.advance()

    def _choose(self, move: Move, box: Box, player: str) -> None:
        self.emit(
            ACTION_EVENT,
            box=box.number,
            player=box.seated,
            detail=move.action,
            rule="15.5",
            by=self.decided_by,
        )
        self.choosing.remove(box.number)
        if move.action is Action.VOID:
            self.void_box(box, "15.5(a)")
        if not self.choosing:
            self.advance()

    def _hit(self, move: Move, box: Box, hand: Hand) -> None:
        self.deal_card(box, self.hand_index, "8.4")
        self.card_reached(box, self.hand_index, hand)

    def _stand(self, move: Move, box: Box, hand: Hand) -> None:
        hand.state = STOOD

    def _refuse(self, move: Move, box: Box, hand: Hand) -> None:
        hand.refused = True  # 16.4: no additional cards to this hand in this round
        hand.state = STOOD

    def _double(self, move: Move, box: Box, hand: Hand) -> None:
        w = hand.wager_of(box.seated)
        assert w is not None
        amount = w.stake if move.amount is None else move.amount
        w.double = amount
        hand.doubled = True
        self._stake(box, self.hand_index, box.seated, amount, "12")
        self._start_follow_ups(DOUBLE, box, hand)

    def _split(self, move: Move, box: Box, hand: Hand) -> None:
        i = self.hand_index
        seated = hand.wager_of(box.seated)
        assert seated is not None
        aces = hand.cards[0].is_ace
        second = Hand([hand.cards.pop()], [Wager(box.seated, seated.stake)], True, aces)
        hand.from_split = True
        hand.split_aces = aces
        box.hands.insert(i + 1, second)
        self._stake(box, i + 1, box.seated, seated.stake, "13")
        self._start_follow_ups(SPLIT, box, hand)

    def _surrender(self, move: Move, box: Box, hand: Hand) -> None:
        if self.rules.surrender == "late" or self.rules.dealer_peeks:
            self._settle_surrender(box, hand, voided=False)
        else:
            hand.state = SURRENDERED  # 9.4: waits for the dealer's second card

    def _rescue(self, move: Move, box: Box, hand: Hand) -> None:
        for w in hand.wagers:
            self._settle(box, self.hand_index, w, SURRENDER_OUTCOME, "12", lost=w.stake)
        hand.state = SETTLED
        self._discard(box, self.hand_index, hand, "12")

    def _start_follow_ups(self, kind: Action, box: Box, hand: Hand) -> None:
        waiting = [w.player for w in hand.wagers if w.player != box.seated]
        self.follow_ups = FollowUps(kind, self.hand_index, waiting)
        if not waiting:
            self._end_follow_ups(box)

    def _follow_up(self, move: Move, box: Box, player: str) -> None:
        fu = self.follow_ups
        assert fu is not None
        hand = box.hands[fu.hand]
        w = hand.wager_of(player)
        assert w is not None
        action = move.action
        follow: FollowChoice | None = None
        if action is SPLIT:
            follow = Follow.BOTH if move.follow is None else move.follow
        self.emit(
            ACTION_EVENT,
            box=box.number,
            hand=fu.hand,
            player=player,
            detail=action,
            amount=move.amount,
            rule="15.3(c)" if fu.kind is DOUBLE else "15.3(d)",
            by=self.decided_by,
            follow=follow,
        )
        if action is DOUBLE:
            amount = w.stake if move.amount is None else move.amount
            w.double = amount
            self._stake(box, fu.hand, player, amount, "15.3(c)")
        elif action is SPLIT:
            other = box.hands[fu.hand + 1]
            if follow == Follow.BOTH:
                other.wagers.append(Wager(player, w.stake))
                self._stake(box, fu.hand + 1, player, w.stake, "15.3(d)")
            elif follow == 1:
                hand.wagers.remove(w)
                other.wagers.append(w)
        fu.waiting.remove(player)
        if not fu.waiting:
            self._end_follow_ups(box)
            self.advance()

    def _end_follow_ups(self, box: Box) -> None:
        fu = self.follow_ups
        assert fu is not None
        self.follow_ups = None
        hand = box.hands[fu.hand]
        if fu.kind is DOUBLE:
            self.deal_card(box, fu.hand, "14.1(b)")
            self.card_reached(box, fu.hand, hand)
            if hand.state is OPEN and not self.rules.double_rescue:
                hand.state = STOOD
        else:  # split: the first hand gets its second card now (13.5)
            self.deal_card(box, fu.hand, "13.5")
            self.card_reached(box, fu.hand, hand)

    # ================================================================== the dealer

    # ================================================================== replay (8.6)
    @classmethod
    def from_events(cls, events: Sequence[Event], source: CardSource | None = None) -> Round:
        """A new round that has made exactly the moves of ``events``: dealt from the cards the
        log records, or from ``source`` (a shoe in the state it was in when the round began).
        Because the round is deterministic given its cards, it has the same state and log."""
        if not events or events[0].kind != RULES_EVENT or events[0].detail is None:
            raise InputError("a round's log starts with its rule set")
        rules = rules_from_dict(json.loads(events[0].detail))
        items: list[Card | ShoeNote] = []
        left = dict(cards_left(events))
        for i, e in enumerate(events):
            if e.kind in _SHOE_NOTES:  # told to the round as they were recorded
                burnt = Card.parse(e.card) if e.card else None
                items.append((e.kind, e.rule or "", burnt, e.detail))
            elif i in left:
                items.append(left[i])
        rnd = cls(rules, source if source is not None else ScriptedCards(items))
        omitted = any(e.kind == IRREGULARITY and e.detail == OMITTED_IN_DEAL for e in events)
        dealt = ready = False
        for e in events[1:]:
            if e.kind in _SHOE_NOTES and not dealt and not ready:
                rnd.ready_shoe()  # the shuffle before the deal, where the log has it
                ready = True
            elif e.kind == WAGER:
                assert e.box is not None and e.player is not None and e.amount is not None
                if e.detail == SEVENS:
                    rnd.place_side_wager(e.box, e.player, e.amount)
                else:
                    rnd.place_wager(e.box, e.player, e.amount)
            elif e.kind == ACTION_EVENT and e.detail == DealerStep.NO_MORE_BETS and not dealt:
                rnd.deal(omit_dealer_card=omitted)
                dealt = True
            elif e.kind == IRREGULARITY and e.detail != OMITTED_IN_DEAL:
                assert e.detail is not None
                card = e.card if e.detail == Procedure.DAMAGED else None
                op = Irregularity(e.detail, e.by or Role.DEALER, e.box, e.hand, e.player, card)
                rnd.apply_irregularity(op)
            elif (move := move_of(e)) is not None:
                rnd.apply(move)
        return rnd


def cards_left(events: Iterable[Event]) -> list[tuple[int, Card]]:
    """The cards a log shows leaving the shoe, in the order they left it, each with its
    event's index: burnt (8.1), dealt, the hole card, a card taken out by a procedure (16.1
    face up in the shoe, 16.2, 16.4 exposed, 15.5). A card dealt after it was exposed was
    drawn when it was exposed (its deal is not counted again); a hole card turned up, a
    replaced card (16.8) and a discard move no card out of the shoe.

    >>> log = [Event("burn", card="7H", rule="8.1"), Event("deal", box=1, card="KD"),
    ...        Event("reveal", card="AS"), Event("hole", card="2C")]
    >>> [(i, c.code) for i, c in cards_left(log)]
    [(0, '7H'), (1, 'KD'), (3, '2C')]
    """
    out: list[tuple[int, Card]] = []
    for i, e in enumerate(events):
        if e.card is None:
            continue
        kind = e.kind
        drawn = kind == BURN or (kind in (DEAL, HOLE) and e.rule not in _EXPOSED)
        if drawn or (kind == IRREGULARITY and e.detail in DRAWING):
            out.append((i, Card.parse(e.card)))
    return out


def move_of(event: Event) -> Move | None:
    """The decision an ``action`` event records, or None for the dealer's own steps (a log
    of an earlier version is read as :func:`~pontoon.events.upgraded` says)."""
    if event.kind != ACTION_EVENT or event.detail in _AUTOMATIC or event.box is None:
        return None
    e = upgraded(event)
    assert e.detail is not None
    return Move(
        action_of(e.detail),
        event.box,
        player=e.player,
        amount=e.amount,
        follow=e.follow,
    )


_AUTOMATIC: Final = tuple(DealerStep)  # action events that the round writes by itself
_EXPOSED: Final = ("16.4", "15.7")  # deals of an exposed card: drawn when it was exposed
_SHOE_NOTES: Final = (SHUFFLE, BURN, EventKind.DISCLOSE)  # the shoe's own events

_MakeFn = Callable[[Round, Move, Box, str], None]
_MAKERS: Final[dict[Route, _MakeFn]] = {
    Route.INSURANCE: Round._insure,
    Route.CHOICE: Round._choose,
    Route.LATE_SURRENDER: Round._make_seated,
    Route.FOLLOW: Round._follow_up,
    Route.SEATED: Round._make_seated,
}
_ACTS: Final[dict[Action, Callable[[Round, Move, Box, Hand], None]]] = {
    HIT: Round._hit,
    STAND: Round._stand,
    DOUBLE: Round._double,
    SPLIT: Round._split,
    SURRENDER: Round._surrender,
    RESCUE: Round._rescue,
    REFUSE: Round._refuse,
}

__all__ = [
    "ACTIONS",
    "OMITTED_IN_DEAL",
    "SEVENS",
    "Box",
    "Hand",
    "Move",
    "Round",
    "Wager",
    "cards_left",
    "move_of",
]
