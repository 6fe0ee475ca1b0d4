"""One round of Pontoon as a state machine (sections 8-15).

Ask, then act: :meth:`Round.legal_moves` lists what may be done now, :meth:`Round.check`
raises :class:`~pontoon.errors.IllegalAction` naming the rule that forbids a move, and
:meth:`Round.apply` either makes the move (and every automatic step after it: cards the rules
deal without a choice, interim settlement, the dealer's hand, settlement) or changes nothing.
Every change is an :class:`~pontoon.events.Event` in :attr:`Round.events`;
:func:`pontoon.replay.replay` rebuilds a round from them (8.6).

>>> from pontoon.cards import parse_cards
>>> from pontoon.rules import load_rules
>>> from pontoon.shoe import ScriptedCards
>>> r = Round(load_rules("nz-pontoon"), ScriptedCards(parse_cards("9S 7H KD 8C 5C")))
>>> r.place_wager(1, "ana", 1000)
>>> r.deal()
>>> [m.action for m in r.legal_moves()]
['hit', 'stand', 'double']
>>> r.apply(Move("stand", 1))
>>> r.over, r.net("ana")              # dealer 7 8 5 = 20 beats 19
(True, -1000)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from pontoon import irregularities
from pontoon.cards import Card
from pontoon.errors import IllegalAction
from pontoon.events import Event
from pontoon.hand import hard_total, is_pair, is_pontoon, is_super_bonus_cards, total
from pontoon.irregularities import Irregularity
from pontoon.money import dollars
from pontoon.rules import RuleSet, rules_json
from pontoon.settlement import odds_text, super_bonus_amount, win_odds, winnings
from pontoon.shoe import CardSource, ShoeEmpty

SEATED_ACTIONS: Final = ("hit", "stand", "double", "split", "surrender", "rescue", "refuse")
FOLLOW_ACTIONS: Final = ("double", "split", "decline")
INSURANCE_ACTIONS: Final = ("insure", "no-insurance")
CHOICE_ACTIONS: Final = ("void", "complete")  # 15.5: a seated player's choice
ACTIONS: Final = (*SEATED_ACTIONS, "decline", *INSURANCE_ACTIONS, *CHOICE_ACTIONS)

# Phases of a round
BETTING: Final = "betting"
INSURANCE: Final = "insurance"  # peek game only: insurance before the dealer peeks
PLAYING: Final = "playing"
OVER: Final = "over"

# States of a hand
OPEN: Final = "open"  # awaiting decisions
STOOD: Final = "stood"  # waiting for the dealer's total
NATURAL: Final = "natural"  # a pontoon not paid at once (blackjack): waits for the dealer's
SUPER: Final = "super"  # 11.2: a Super Bonus, paid at the end of the round
SETTLED: Final = "settled"  # paid, busted, surrendered or void: nothing depends on the dealer
SURRENDERED: Final = "surrendered"  # 9.4: waits for the dealer's second card


@dataclass(frozen=True, slots=True)
class Move:
    """A decision. ``player`` None means the seated player of ``box``; ``hand`` None means
    the hand in play; ``follow`` is a player behind's choice after a split: ``"both"``, 0 or
    1 (the first or second hand the split made)."""

    action: str
    box: int
    hand: int | None = None
    player: str | None = None
    amount: int | None = None
    follow: str | int | None = None

    def __str__(self) -> str:
        who = f" {self.player}" if self.player else ""
        extra = f" {self.amount}" if self.amount is not None else ""
        extra += f" follow {self.follow}" if self.follow is not None else ""
        return f"{self.action}{who} box {self.box}{extra}"


@dataclass(slots=True)
class Wager:
    """One player's money on one hand: ``stake`` plus ``double``."""

    player: str
    stake: int
    double: int = 0
    settled: bool = False
    outcome: str | None = None
    odds: Fraction | None = None
    net: int = 0

    @property
    def amount(self) -> int:
        return self.stake + self.double


@dataclass(slots=True)
class Hand:
    cards: list[Card]
    wagers: list[Wager]
    from_split: bool = False
    split_aces: bool = False
    doubled: bool = False
    acted: bool = False
    state: str = OPEN
    discarded: bool = False
    refused: bool = False  # 16.4: refused an exposed card, no more cards this round

    @property
    def total(self) -> int:
        return total(self.cards)

    def wager_of(self, player: str) -> Wager | None:
        for w in self.wagers:
            if w.player == player:
                return w
        return None


@dataclass(slots=True)
class Box:
    number: int
    players: list[str]  # the seated player first (15.3(a))
    original: dict[str, int]  # each player's original wager
    hands: list[Hand] = field(default_factory=list)
    insurance: dict[str, Wager] = field(default_factory=dict)
    declined_insurance: set[str] = field(default_factory=set)
    sevens: dict[str, Wager] = field(default_factory=dict)  # Super Sevens side wagers
    first_cards: list[Card] = field(default_factory=list)  # the first three cards of the box
    surrender_offered_late: bool = False  # 16.12: a missed surrender offer still honoured

    @property
    def seated(self) -> str:
        return self.players[0]


@dataclass(slots=True)
class FollowUps:
    """15.3(c)/(d): after the seated player doubles or splits, the players behind choose."""

    kind: str  # "double" or "split"
    hand: int
    waiting: list[str]


_make_event = tuple.__new__


def _whole(x: object) -> bool:
    """An amount of money: a whole number of minor units (and not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool)


class Round:
    """A round on ``rules`` dealt from ``source``. Place wagers, :meth:`deal`, then
    :meth:`apply` moves until :attr:`over`."""

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
        self.events: list[Event] = [Event("rules", detail=rules_json(rules), rule=rules.name)]
        source.listener = self._shoe_event

    # ------------------------------------------------------------------ reading the state
    @property
    def over(self) -> bool:
        return self.phase == OVER

    def net(self, player: str) -> int:
        """What ``player`` has won (positive) or lost in this round so far."""
        return self.balance.get(player, 0)

    @property
    def players(self) -> list[str]:
        return list(self.balance)

    def current(self) -> tuple[Box, Hand] | None:
        """The box and hand whose decision is awaited, or None."""
        if self.phase != PLAYING or self.turn >= len(self.order):
            return None
        box = self.order[self.turn]
        return box, box.hands[self.hand_index]

    def hands(self) -> Iterator[tuple[Box, int, Hand]]:
        for box in self.order:
            for i, hand in enumerate(box.hands):
                yield box, i, hand

    def cards_on_layout(self) -> list[Card]:
        """Cards dealt this round and not yet in the discard rack."""
        out = [c for _, _, h in self.hands() if not h.discarded for c in h.cards]
        if self.phase != OVER:
            out += self.dealer
            if self.hole is not None:
                out.append(self.hole)
        if self.exposed is not None:
            out.append(self.exposed)
        return out

    # ------------------------------------------------------------------ events and money
    def _emit(
        self,
        kind: str,
        box: int | None = None,
        hand: int | None = None,
        player: str | None = None,
        card: str | None = None,
        amount: int | None = None,
        detail: str | None = None,
        odds: str | None = None,
        rule: str | None = None,
        by: str | None = None,
    ) -> None:
        # Built as a plain tuple: the named tuple's own constructor costs a third more here.
        event = (kind, box, hand, player, card, amount, detail, odds, rule, by)
        self.events.append(_make_event(Event, event))

    def _shoe_event(self, kind: str, rule: str, card: Card | None) -> None:
        self._emit(kind, rule=rule, card=card.code if card else None)

    def _stake(self, box: Box, hand: int | None, player: str, amount: int, rule: str) -> None:
        self.balance[player] = self.balance.get(player, 0) - amount
        self.table += amount
        self._emit("stake", box=box.number, hand=hand, player=player, amount=amount, rule=rule)

    def _money(
        self, kind: str, box: Box, hand: int | None, player: str, amount: int, rule: str
    ) -> None:
        if amount <= 0:
            return
        if kind == "return":
            self.table -= amount
            self.balance[player] += amount
        elif kind == "collect":
            self.table -= amount
            self.house += amount
        else:  # pay
            self.house -= amount
            self.balance[player] += amount
        self._emit(kind, box=box.number, hand=hand, player=player, amount=amount, rule=rule)

    def _settle(
        self,
        box: Box,
        hand: int | None,
        w: Wager,
        outcome: str,
        rule: str,
        *,
        odds: Fraction | None = None,
        won: int = 0,
        lost: int | None = None,
    ) -> None:
        """Settle one wager: ``won`` from the house, ``lost`` (default all of it, on a loss,
        or none) to the house, the rest of the stake back to the player."""
        if lost is None:
            lost = w.amount if outcome in ("lose", "bust") else 0
        self._emit(
            "outcome",
            box=box.number,
            hand=hand,
            player=w.player,
            detail=outcome,
            odds=odds_text(odds) if odds is not None else None,
            rule=rule,
        )
        self._money("collect", box, hand, w.player, lost, rule)
        self._money("return", box, hand, w.player, w.amount - lost, rule)
        self._money("pay", box, hand, w.player, won, rule)
        w.settled = True
        w.outcome = "lose" if outcome == "bust" else outcome
        w.odds = odds
        w.net = won - lost

    def _discard(self, box: Box, index: int, hand: Hand, rule: str) -> None:
        if not hand.discarded:
            hand.discarded = True
            self.source.discard(hand.cards)
            self._emit("discard", box=box.number, hand=index, rule=rule)

    def _next_card(self) -> tuple[Card, bool]:
        """The next card to be dealt and whether it is an exposed card (16.4) already drawn."""
        card = self.exposed
        if card is not None:
            self.exposed = None
            return card, True
        return self.source.draw(), False

    def _deal(self, box: Box | None, index: int, rule: str) -> Card:
        card, exposed = self._next_card()
        if exposed:
            rule = self.book_rule("16.4")
        if box is None:
            self.dealer.append(card)
            self._emit("deal", card=card.code, rule=rule)
        else:
            box.hands[index].cards.append(card)
            self._emit("deal", box=box.number, hand=index, card=card.code, rule=rule)
            if len(box.first_cards) < 3:
                box.first_cards.append(card)
                if box.sevens and not self.dealer_card_omitted:  # 15.5: wait for the cards
                    self._settle_sevens(box, final=False)
        return card

    def book_rule(self, pontoon_rule: str) -> str:
        """A Pontoon section 16 rule number, or its Blackjack 1996 counterpart."""
        if self.rules.rule_book == "blackjack":
            return _BLACKJACK_RULES.get(pontoon_rule, pontoon_rule)
        return pontoon_rule

    # ------------------------------------------------------------------ wagers
    def check_wager(self, box_number: int, player: str, amount: int) -> None:
        """Raise :class:`IllegalAction` unless ``player`` may wager ``amount`` on the box."""
        r = self.rules
        if self.phase != BETTING:
            raise IllegalAction("wager", box_number, "8.2", "no bets after 'No more bets'")
        if not 1 <= box_number <= r.boxes:
            raise IllegalAction("wager", box_number, "15", f"the layout has boxes 1 to {r.boxes}")
        if not player or not isinstance(player, str):
            raise IllegalAction("wager", box_number, "15.3", "a wager needs a player's name")
        if not _whole(amount):
            raise IllegalAction("wager", box_number, "5", "amounts are whole minor units")
        box = self.boxes.get(box_number)
        mine = box.original.get(player, 0) if box else 0
        if amount < r.table_min:
            raise IllegalAction(
                "wager",
                box_number,
                "15.6",
                f"each wager must be at least the minimum {dollars(r.table_min)}",
            )
        if mine + amount > r.table_max:
            raise IllegalAction(
                "wager",
                box_number,
                "15.2",
                f"the wager of {player} would exceed the maximum {dollars(r.table_max)}",
            )
        if box and player not in box.players and len(box.players) >= r.players_per_box:
            raise IllegalAction(
                "wager",
                box_number,
                "15.1",
                f"at most {r.players_per_box} players may wager on a box",
            )
        on_box = sum(box.original.values()) if box else 0
        if r.box_max and on_box + amount > r.box_max:
            raise IllegalAction(
                "wager", box_number, "15.2", f"the box maximum is {dollars(r.box_max)}"
            )
        boxes = {b.number for b in self.boxes.values() if player in b.original}
        if box_number not in boxes and len(boxes) >= r.boxes_per_player:
            raise IllegalAction(
                "wager",
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
        self._emit("wager", box=box_number, player=player, amount=amount, rule="8.2")
        self._stake(box, None, player, amount, "8.2")

    def check_side_wager(self, box_number: int, player: str, amount: int) -> None:
        """Raise :class:`IllegalAction` unless ``player`` may make a Super Sevens wager."""
        r = self.rules
        if not r.super_sevens:
            raise IllegalAction("super-sevens", box_number, "Super Sevens", "not offered here")
        if self.phase != BETTING:
            raise IllegalAction("super-sevens", box_number, "8.2", "no bets after 'No more bets'")
        box = self.boxes.get(box_number)
        if box is None or player not in box.players:
            raise IllegalAction(
                "super-sevens", box_number, "Super Sevens", f"{player} has no wager on this box"
            )
        if player in box.sevens:
            raise IllegalAction("super-sevens", box_number, "Super Sevens", "one wager a player")
        if not _whole(amount) or not r.super_sevens_min <= amount <= r.super_sevens_max:
            raise IllegalAction(
                "super-sevens",
                box_number,
                "Super Sevens",
                f"the wager must be {dollars(r.super_sevens_min)} to {dollars(r.super_sevens_max)}",
            )

    def place_side_wager(self, box_number: int, player: str, amount: int) -> None:
        """A Super Sevens wager (Blackjack 1996) beside ``player``'s wager on the box."""
        self.check_side_wager(box_number, player, amount)
        box = self.boxes[box_number]
        box.sevens[player] = Wager(player, amount)
        self._emit(
            "wager", box=box_number, player=player, amount=amount, detail=SEVENS, rule=SEVENS
        )
        self._stake(box, None, player, amount, SEVENS)

    def _settle_sevens(self, box: Box, final: bool) -> None:
        """Super Sevens, settled as the box's first three cards fall: a first card 7 pays 3:1,
        7-7 50:1 (suited 100:1), 7-7-7 500:1 (suited 5000:1); anything else loses."""
        r = self.rules
        c = box.first_cards
        for w in box.sevens.values():
            if w.settled or not c:
                continue
            odds: Fraction | None = None
            if c[0].rank != 7:
                self._settle(box, None, w, "lose", SEVENS)
                continue
            if len(c) == 1:
                if not final:
                    continue
                odds = r.super_sevens_one_pays
            elif c[1].rank != 7:
                odds = r.super_sevens_one_pays
            elif len(c) == 3 and c[2].rank == 7:
                suited = c[0].suit == c[1].suit == c[2].suit
                odds = r.super_sevens_three_suited_pays if suited else r.super_sevens_three_pays
            elif len(c) == 3 or final:
                suited = c[0].suit == c[1].suit
                odds = r.super_sevens_two_suited_pays if suited else r.super_sevens_two_pays
            else:
                continue
            self._settle(box, None, w, "win", SEVENS, odds=odds, won=winnings(w.amount, odds))

    # ------------------------------------------------------------------ the deal
    def deal(self, omit_dealer_card: bool = False) -> None:
        """'No more bets' and the initial deal (8.2), then interim settlement (9.1) and the
        automatic steps up to the first decision. ``omit_dealer_card`` records a deal in which
        the dealer gave himself or herself no first card (Blackjack 15.5)."""
        if self.phase != BETTING:
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
        self._emit("action", detail="no-more-bets", rule="8.2")
        for box in self.order:
            self._deal(box, 0, "8.2(a)")
        if omit_dealer_card:
            self.dealer_card_omitted = True
            self._emit("irregularity", detail=OMITTED_IN_DEAL, rule="15.5", by="dealer")
        else:
            self._deal(None, 0, "8.2(b)")
        for box in self.order:
            self._deal(box, 0, "8.2(c)")
        if self.rules.dealer_peeks:
            self.hole, _ = self._next_card()
            self._emit("hole", card=self.hole.code, rule="8.5")
        self.phase = PLAYING
        if self.rules.dealer_peeks:
            if self._insurance_offered() and self._insurance_waiting():
                self.phase = INSURANCE
                return
            self._peek()
            if self.over:
                return
        self._interim_settlement()
        self._advance()

    def _interim_settlement(self) -> None:
        """9.1: a pontoon is paid at once, before any further card is dealt."""
        for box in self.order:
            hand = box.hands[0]
            if is_pontoon(hand.cards):
                if self.rules.player_21_wins or self.rules.dealer_peeks:
                    self._pay_hand(box, 0, hand, self.rules.natural_pays, "9.1")
                else:
                    hand.state = NATURAL

    def _pay_hand(self, box: Box, index: int, hand: Hand, odds: Fraction, rule: str) -> None:
        for w in hand.wagers:
            self._settle(box, index, w, "win", rule, odds=odds, won=winnings(w.amount, odds))
        hand.state = SETTLED
        self._discard(box, index, hand, rule)

    # ------------------------------------------------------------------ insurance
    def _insurance_offered(self) -> bool:
        return self.rules.insurance and bool(self.dealer) and self.dealer[0].is_ace

    def _insurance_window(self) -> bool:
        if not self._insurance_offered() or self.phase == OVER:
            return False
        if self.rules.dealer_peeks:
            return self.phase == INSURANCE
        return self.phase == PLAYING and len(self.dealer) == 1

    def _insurable(self, box: Box, player: str) -> int:
        """The most ``player`` may insure on ``box`` now (0: nothing)."""
        if player in box.insurance or player in box.declined_insurance:
            return 0
        live = any(w.player == player and not w.settled for h in box.hands for w in h.wagers)
        if not live:
            return 0
        return winnings(box.original[player], self.rules.insurance_max)

    def _insurance_waiting(self) -> list[tuple[Box, str]]:
        return [(b, p) for b in self.order for p in b.players if self._insurable(b, p)]

    def _check_insurance(self, move: Move) -> None:
        box = self.boxes.get(move.box)
        player = move.player or (box.seated if box else "")
        if not self._insurance_offered():
            raise IllegalAction(
                move.action, move.box, "10", "insurance is offered only against a dealer ace"
            )
        if not self._insurance_window():
            raise IllegalAction(
                move.action, move.box, "16.11", "insurance closed with the dealer's second card"
            )
        if box is None or player not in box.players:
            raise IllegalAction(
                move.action, move.box, "15.3(f)", f"{player} has no wager on this box"
            )
        if player in box.insurance or player in box.declined_insurance:
            raise IllegalAction(
                move.action, move.box, "10", f"{player} has already decided on insurance"
            )
        most = self._insurable(box, player)
        if not most:
            raise IllegalAction(
                move.action, move.box, "10", f"the wager of {player} is already settled"
            )
        if move.action == "insure":
            amount = most if move.amount is None else move.amount
            if not _whole(amount) or not 1 <= amount <= most:
                raise IllegalAction(
                    move.action, move.box, "10", f"insurance may be 1 to {most} (half the wager)"
                )

    def _insure(self, move: Move) -> None:
        box = self.boxes[move.box]
        player = move.player or box.seated
        if move.action == "insure":
            amount = move.amount if move.amount is not None else self._insurable(box, player)
            self._emit(
                "action", box=box.number, player=player, detail="insure", amount=amount, rule="10"
            )
            box.insurance[player] = Wager(player, amount)
            self._stake(box, None, player, amount, "10")
        else:
            self._emit("action", box=box.number, player=player, detail="no-insurance", rule="10")
            box.declined_insurance.add(player)
        if self.phase == INSURANCE and not self._insurance_waiting():
            self._close_insurance()

    def _close_insurance(self) -> None:
        self.phase = PLAYING
        self._peek()
        if not self.over:
            self._interim_settlement()
            self._advance()

    def _settle_insurance(self, dealer_natural: bool) -> None:
        odds = self.rules.insurance_pays
        for box in self.order:
            for w in box.insurance.values():
                if w.settled:  # void (16.5)
                    continue
                if dealer_natural:
                    self._settle(box, None, w, "win", "10", odds=odds, won=winnings(w.amount, odds))
                else:
                    self._settle(box, None, w, "lose", "10")

    # ------------------------------------------------------------------ the peek game
    def _peek(self) -> None:
        """Peek game: with an ace or ten up, the dealer looks at the hole card; a dealer
        blackjack ends the round at once."""
        up = self.dealer[0]
        if not (up.is_ace or up.value == 10):
            return
        assert self.hole is not None
        natural = is_pontoon([up, self.hole])
        self._emit("action", detail="peek", rule="8.5")
        self._settle_insurance(natural)
        if natural:
            self._reveal()
            for box in self.order:
                hand = box.hands[0]
                for w in hand.wagers:
                    if w.settled:  # void (16.5)
                        continue
                    if is_pontoon(hand.cards):
                        if self.rules.player_21_wins:
                            odds = self.rules.natural_pays
                            self._settle(
                                box, 0, w, "win", "9.1", odds=odds, won=winnings(w.amount, odds)
                            )
                        else:
                            self._settle(box, 0, w, "push", "5.1")
                    else:
                        self._settle(box, 0, w, "lose", "5.1")
                hand.state = SETTLED
            self._finish()

    def _reveal(self) -> None:
        if self.hole is not None:
            card = self.hole
            self.hole = None
            self.dealer.append(card)
            self._emit("reveal", card=card.code, rule="8.5")

    # ------------------------------------------------------------------ checking moves
    def check(self, move: Move) -> None:
        """Raise :class:`IllegalAction` naming the rule unless ``move`` is legal now."""
        if move.action not in ACTIONS:
            raise IllegalAction(
                move.action, move.box, "8.3", f"unknown action; one of {', '.join(ACTIONS)}"
            )
        if move.amount is not None and move.action not in ("double", "insure"):
            rule = "10" if move.action == "no-insurance" else _ACTION_RULE.get(move.action, "8.3")
            raise IllegalAction(move.action, move.box, rule, f"a {move.action} takes no amount")
        if move.follow is not None and move.action != "split":
            raise IllegalAction(move.action, move.box, "15.3(d)", "only a split is followed")
        if move.action in INSURANCE_ACTIONS:
            if move.hand is not None:
                raise IllegalAction(move.action, move.box, "10", "insurance is on the box")
            self._check_insurance(move)
            return
        if self.phase == BETTING:
            raise IllegalAction(move.action, move.box, "8.2", "the cards have not been dealt")
        box = self.boxes.get(move.box)
        if box is None:
            raise IllegalAction(move.action, move.box, "8.2", "the box holds no wager")
        player = move.player or box.seated
        if self.choosing or move.action in CHOICE_ACTIONS:
            self._check_choice(move, box, player)
            return
        cur = self.current()
        if (
            move.action == "surrender"
            and box.surrender_offered_late
            and player == box.seated
            and (cur is None or cur[0] is not box)
        ):  # 16.12: a missed surrender offer, taken out of turn
            self._check_surrender(move, box, box.hands[0])
            return
        if player != box.seated and self.phase == PLAYING:
            self._check_follow_up(move, box, player)
            return
        if self.phase == INSURANCE:
            raise IllegalAction(
                move.action, move.box, "10", "insurance must be decided before the dealer peeks"
            )
        if player != box.seated:
            raise IllegalAction(move.action, move.box, "15.3(a)", "only the seated player decides")
        if move.follow is not None:
            raise IllegalAction(
                move.action, move.box, "15.3(d)", "the seated player follows no hand"
            )
        fu = self.follow_ups
        if fu is not None:
            raise IllegalAction(
                move.action,
                move.box,
                "15.3(c)" if fu.kind == "double" else "15.3(d)",
                f"{', '.join(fu.waiting)} on box {self.order[self.turn].number} must first "
                f"choose whether to {fu.kind}",
            )
        cur = self.current()
        in_turn = cur is not None and cur[0] is box
        index = move.hand if move.hand is not None else (self.hand_index if in_turn else 0)
        if cur is None or not in_turn or index != self.hand_index:
            # Not this hand's turn: say why the hand itself cannot take the move, if it can't.
            if 0 <= index < len(box.hands) and move.action in SEATED_ACTIONS:
                getattr(self, "_check_" + move.action)(move, box, box.hands[index])
            if cur is None:
                raise IllegalAction(move.action, move.box, "8.6", "the round is over")
            if not in_turn:
                raise IllegalAction(
                    move.action, move.box, "8.3", f"box {cur[0].number} is to act first"
                )
            raise IllegalAction(
                move.action,
                move.box,
                "13.5",
                f"hand {self.hand_index} is in play, not hand {index}",
            )
        hand = cur[1]
        if move.action == "decline":
            raise IllegalAction(
                move.action, move.box, "15.3(e)", "only a player behind may decline"
            )
        getattr(self, "_check_" + move.action)(move, box, hand)

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

    def can(self, move: Move) -> bool:
        """Whether ``move`` is legal now."""
        try:
            self.check(move)
        except IllegalAction:
            return False
        return True

    def _check_refused(self, move: Move, box: Box, hand: Hand) -> None:
        if hand.refused:
            raise IllegalAction(
                move.action, box.number, self.book_rule("16.4"), "the hand refused an exposed card"
            )

    def _check_refuse(self, move: Move, box: Box, hand: Hand) -> None:
        if self.exposed is None:
            raise IllegalAction("refuse", box.number, self.book_rule("16.4"), "no card is exposed")

    def _check_hit(self, move: Move, box: Box, hand: Hand) -> None:
        self._check_refused(move, box, hand)
        if hand.doubled:
            raise IllegalAction("hit", box.number, "14.1(b)", "a doubled hand takes one card only")
        if hand.split_aces and not self.rules.hit_split_aces:
            raise IllegalAction("hit", box.number, "14.1(c)", "split aces take one card each")
        if hand.total >= 21:
            raise IllegalAction("hit", box.number, "14.1(a)", "no draw on 21")

    def _check_stand(self, move: Move, box: Box, hand: Hand) -> None:
        t = hand.total
        if not hand.doubled and t < self.rules.must_draw_below and not hand.split_aces:
            raise IllegalAction(
                "stand",
                box.number,
                "14.1(d)",
                f"a total of {t} must draw to {self.rules.must_draw_below} or more",
            )

    def _check_double(self, move: Move, box: Box, hand: Hand) -> None:
        r = self.rules
        self._check_refused(move, box, hand)
        if hand.doubled:
            raise IllegalAction("double", box.number, "14.1(b)", "the hand is already doubled")
        if hand.split_aces and not r.hit_split_aces:
            raise IllegalAction("double", box.number, "14.1(c)", "split aces take one card each")
        if hand.from_split and not r.double_after_split:
            raise IllegalAction("double", box.number, "12", "no double after a split at this table")
        n = len(hand.cards)
        if r.double_on != "any-number" and n != 2:
            raise IllegalAction("double", box.number, "12", "double on the first two cards only")
        if r.double_on in ("9-11", "10-11"):
            lo = 9 if r.double_on == "9-11" else 10
            if not lo <= hand.total <= 11:
                raise IllegalAction(
                    "double", box.number, "12", f"double on totals {r.double_on} only"
                )
        self._check_double_amount(move, box, hand.wager_of(box.seated))

    def _check_double_amount(self, move: Move, box: Box, w: Wager | None) -> None:
        if w is None:
            raise IllegalAction(
                "double", box.number, "15.3(c)", f"{move.player} has no wager on this hand"
            )
        amount = w.stake if move.amount is None else move.amount
        if not _whole(amount) or not 1 <= amount <= w.stake:
            raise IllegalAction(
                "double",
                box.number,
                "12",
                f"a double may be 1 to {w.stake} (the wager on the hand)",
            )

    def _check_split(self, move: Move, box: Box, hand: Hand) -> None:
        r = self.rules
        self._check_refused(move, box, hand)
        if len(hand.cards) != 2 or not is_pair(hand.cards[0], hand.cards[1], r.split_by):
            raise IllegalAction("split", box.number, "13", "only a pair may be split")
        if len(box.hands) >= r.split_max_hands:
            raise IllegalAction(
                "split", box.number, "13", f"a box may split into at most {r.split_max_hands} hands"
            )
        if hand.split_aces and not r.resplit_aces:
            raise IllegalAction("split", box.number, "13", "split aces may not be split again")
        if move.amount is not None:
            raise IllegalAction(
                "split", box.number, "13", "a split takes a wager equal to the first"
            )

    def _check_surrender(self, move: Move, box: Box, hand: Hand) -> None:
        r = self.rules
        if r.surrender == "none":
            raise IllegalAction("surrender", box.number, "9.3", "no surrender at this table")
        if not self.dealer:
            raise IllegalAction("surrender", box.number, "9.3", "the dealer has no first card")
        up = self.dealer[0]
        if r.surrender == "void-on-pontoon" and not (up.is_ace or up.is_picture or up.value == 10):
            raise IllegalAction(
                "surrender",
                box.number,
                "9.3",
                "surrender only when the dealer's first card is A, K, Q or J",
            )
        if hand.state not in (OPEN, STOOD) or any(w.settled for w in hand.wagers):
            raise IllegalAction("surrender", box.number, "9.3", "the hand is settled")
        late = box.surrender_offered_late
        if len(box.hands) != 1 or len(hand.cards) != 2 or (hand.acted and not late):
            raise IllegalAction(
                "surrender", box.number, "9.3", "surrender on the first two cards only"
            )

    def _check_rescue(self, move: Move, box: Box, hand: Hand) -> None:
        if not self.rules.double_rescue:
            raise IllegalAction("rescue", box.number, "12", "no double-down rescue at this table")
        if not hand.doubled:
            raise IllegalAction("rescue", box.number, "12", "rescue only a doubled hand")

    def _check_follow_up(self, move: Move, box: Box, player: str) -> None:
        fu = self.follow_ups
        if player not in box.players:
            raise IllegalAction(
                move.action, move.box, "15.3", f"{player} has no wager on box {box.number}"
            )
        if move.action not in FOLLOW_ACTIONS:
            raise IllegalAction(
                move.action, move.box, "15.3(a)", "only the seated player decides for the box"
            )
        if fu is None or self.order[self.turn] is not box:
            raise IllegalAction(
                move.action, move.box, "15.3(e)", "the seated player has not doubled or split"
            )
        if move.action != "decline" and move.action != fu.kind:
            raise IllegalAction(
                move.action,
                move.box,
                "15.3(e)",
                f"the seated player chose to {fu.kind}, not {move.action}",
            )
        if player not in fu.waiting:
            raise IllegalAction(
                move.action, move.box, "15.3", f"{player} has no choice to make here"
            )
        if move.hand is not None and move.hand != fu.hand:
            raise IllegalAction(move.action, move.box, "15.3", f"hand {fu.hand} is in play")
        hand = box.hands[fu.hand]
        if move.action == "double":
            if move.follow is not None:
                raise IllegalAction("double", move.box, "15.3(c)", "a double follows no hand")
            self._check_double_amount(move, box, hand.wager_of(player))
        elif move.action == "split":
            if isinstance(move.follow, bool) or move.follow not in ("both", 0, 1, None):
                raise IllegalAction("split", move.box, "15.3(d)", "follow 'both', 0 or 1")
            if move.amount is not None:
                raise IllegalAction(
                    "split", move.box, "15.3(d)", "covering both hands takes an equal wager"
                )
        elif move.follow is not None or move.amount is not None:
            raise IllegalAction("decline", move.box, "15.3(e)", "a decline takes no amount")

    # ------------------------------------------------------------------ irregularities
    def check_irregularity(self, op: Irregularity) -> None:
        """Raise :class:`IllegalAction` naming the rule unless the procedure may be applied."""
        irregularities.check(self, op)

    def can_irregularity(self, op: Irregularity) -> bool:
        try:
            irregularities.check(self, op)
        except IllegalAction:
            return False
        return True

    def apply_irregularity(self, op: Irregularity) -> None:
        """Apply a section 16 (or Blackjack 15.5-15.11) procedure, or raise and change nothing."""
        irregularities.check(self, op)
        self._atomically(op.kind, op.box, irregularities.apply, self, op)

    # ------------------------------------------------------------------ legal moves
    def legal_moves(self) -> list[Move]:
        """Every move that may be made now (amounts at their largest)."""
        out: list[Move] = []
        if self.choosing:
            return [Move(a, n) for n in self.choosing for a in CHOICE_ACTIONS]
        for box in self.order:
            late = Move("surrender", box.number)
            cur = self.current()
            if box.surrender_offered_late and (cur is None or cur[0] is not box) and self.can(late):
                out.append(late)
        if self._insurance_window():
            for box, player in self._insurance_waiting():
                out.append(Move("insure", box.number, player=player))
                out.append(Move("no-insurance", box.number, player=player))
        fu = self.follow_ups
        if fu is not None:
            box = self.order[self.turn]
            for p in fu.waiting:
                if fu.kind == "double":
                    out.append(Move("double", box.number, player=p))
                else:
                    out += [Move("split", box.number, player=p, follow=f) for f in ("both", 0, 1)]
                out.append(Move("decline", box.number, player=p))
            return out
        cur = self.current()
        if cur is not None:
            box = cur[0]
            out += [m for a in SEATED_ACTIONS if self.can(m := Move(a, box.number))]
        return out

    # ------------------------------------------------------------------ acting
    def apply(self, move: Move) -> None:
        """Make ``move`` and every automatic step after it, or raise and change nothing."""
        self.check(move)
        self._atomically(move.action, move.box, self._make, move)

    def _atomically(
        self, action: str, box: int | None, step: Callable[..., None], *args: object
    ) -> None:
        """Run ``step``. Should it fail part-way (the last card of the pack gone, 16.7), put the
        round and the cards back as they were before it, and refuse it."""
        mark, cards = len(self.events), self.source.checkpoint()
        try:
            step(*args)
        except Exception as exc:
            self._rewind(mark)
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

    def _rewind(self, mark: int) -> None:
        """The round as its first ``mark`` events left it, rebuilt from them."""
        from pontoon.replay import replay

        source = self.source
        self.__dict__.update(replay(self.events[:mark]).__dict__)
        self.source = source

    def _make(self, move: Move) -> None:
        if move.action in INSURANCE_ACTIONS:
            self._insure(move)
            return
        box = self.boxes[move.box]
        player = move.player or box.seated
        if move.action in CHOICE_ACTIONS:
            self._choose(move, box)
            return
        if player != box.seated:
            self._follow_up(move, box, player)
            return
        cur = self.current()
        index = self.hand_index if cur is not None and cur[0] is box else 0  # 16.12: late
        hand = box.hands[index]
        self._emit(
            "action",
            box=box.number,
            hand=index,
            player=player,
            detail=move.action,
            amount=move.amount,
            rule=self.book_rule(_ACTION_RULE[move.action]),
        )
        hand.acted = True
        getattr(self, "_" + move.action)(move, box, hand)
        self._advance()

    def _choose(self, move: Move, box: Box) -> None:
        self._emit("action", box=box.number, player=box.seated, detail=move.action, rule="15.5")
        self.choosing.remove(box.number)
        if move.action == "void":
            self.void_box(box, "15.5(a)")
        if not self.choosing:
            self._advance()

    def void_wager(self, box: Box, index: int | None, w: Wager, rule: str) -> None:
        """Void a wager: the player ends with exactly the stake back, even if the wager was
        already settled (15.5(a): whether or not the hand has exceeded 21)."""
        if not w.settled:
            self._settle(box, index, w, "void", rule)
            return
        if w.net < 0:
            self._money("pay", box, index, w.player, -w.net, rule)
        elif w.net > 0:
            self._stake(box, index, w.player, w.net, rule)
            self._money("collect", box, index, w.player, w.net, rule)
        self._emit("outcome", box=box.number, hand=index, player=w.player, detail="void", rule=rule)
        w.outcome = "void"
        w.odds = None
        w.net = 0

    def void_box(self, box: Box, rule: str, hands: list[int] | None = None) -> None:
        """Void the hands of a box (all, or those listed): wagers returned, cards to the
        discard rack. Voiding every hand voids the box's insurance and side wagers too."""
        chosen = range(len(box.hands)) if hands is None else hands
        for i in chosen:
            hand = box.hands[i]
            for w in hand.wagers:
                self.void_wager(box, i, w, rule)
            hand.state = SETTLED
            self._discard(box, i, hand, rule)
        if all(
            h.state == SETTLED and all(w.outcome == "void" for w in h.wagers) for h in box.hands
        ):
            for w in [*box.insurance.values(), *box.sevens.values()]:
                self.void_wager(box, None, w, rule)
        fu = self.follow_ups
        if fu is not None and self.order[self.turn] is box and box.hands[fu.hand].state == SETTLED:
            self.follow_ups = None  # 15.3: no choice is left on a void hand
        if box.number in self.choosing:
            self.choosing.remove(box.number)

    def resume(self) -> None:
        """Go on after a procedure changed the layout: close an insurance phase nobody is left
        to decide, or run the automatic steps to the next decision."""
        if self.phase == INSURANCE and not self._insurance_waiting():
            self._close_insurance()
        else:
            self._advance()

    def _hit(self, move: Move, box: Box, hand: Hand) -> None:
        self._deal(box, self.hand_index, "8.4")
        self._after_card(box, self.hand_index, hand)

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
        self._start_follow_ups("double", box, hand)

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
        self._start_follow_ups("split", box, hand)

    def _surrender(self, move: Move, box: Box, hand: Hand) -> None:
        if self.rules.surrender == "late" or self.rules.dealer_peeks:
            self._settle_surrender(box, hand, voided=False)
        else:
            hand.state = SURRENDERED  # 9.4: waits for the dealer's second card

    def _settle_surrender(self, box: Box, hand: Hand, voided: bool) -> None:
        for w in hand.wagers:
            if voided:
                self._settle(box, 0, w, "lose", "9.4")
            else:
                kept = winnings(w.amount, self.rules.surrender_returns)
                self._settle(box, 0, w, "surrender", "9.3", lost=w.amount - kept)
        hand.state = SETTLED
        self._discard(box, 0, hand, "9.3")

    def _rescue(self, move: Move, box: Box, hand: Hand) -> None:
        for w in hand.wagers:
            self._settle(box, self.hand_index, w, "surrender", "12", lost=w.stake)
        hand.state = SETTLED
        self._discard(box, self.hand_index, hand, "12")

    def _start_follow_ups(self, kind: str, box: Box, hand: Hand) -> None:
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
        follow = None
        if move.action == "split":
            follow = "both" if move.follow is None else move.follow
        self._emit(
            "action",
            box=box.number,
            hand=fu.hand,
            player=player,
            detail=move.action if follow is None else f"split/{follow}",
            amount=move.amount,
            rule="15.3(c)" if fu.kind == "double" else "15.3(d)",
        )
        if move.action == "double":
            amount = w.stake if move.amount is None else move.amount
            w.double = amount
            self._stake(box, fu.hand, player, amount, "15.3(c)")
        elif move.action == "split":
            other = box.hands[fu.hand + 1]
            if follow == "both":
                other.wagers.append(Wager(player, w.stake))
                self._stake(box, fu.hand + 1, player, w.stake, "15.3(d)")
            elif follow == 1:
                hand.wagers.remove(w)
                other.wagers.append(w)
        fu.waiting.remove(player)
        if not fu.waiting:
            self._end_follow_ups(box)
            self._advance()

    def apply_defaults(self) -> None:
        """Take the default for every open offer: players behind decline to double and keep
        their wager on the first hand of a split (15.3); in the peek game, undecided players
        decline insurance and the dealer peeks. Each default is recorded as a move."""
        if self.phase == INSURANCE:
            for box, player in self._insurance_waiting():
                self.apply(Move("no-insurance", box.number, player=player))
        while self.choosing:
            self.apply(Move("complete", self.choosing[0]))
        fu = self.follow_ups
        while fu is not None and fu.waiting:
            box = self.order[self.turn]
            self.apply(Move("decline", box.number, player=fu.waiting[0]))

    def _end_follow_ups(self, box: Box) -> None:
        fu = self.follow_ups
        assert fu is not None
        self.follow_ups = None
        hand = box.hands[fu.hand]
        if fu.kind == "double":
            self._deal(box, fu.hand, "14.1(b)")
            self._after_card(box, fu.hand, hand)
            if hand.state == OPEN and not self.rules.double_rescue:
                hand.state = STOOD
        else:  # split: the first hand gets its second card now (13.5)
            self._deal(box, fu.hand, "13.5")
            self._after_card(box, fu.hand, hand)

    def _after_card(self, box: Box, index: int, hand: Hand) -> None:
        """A card has reached an open hand: bust (14.2), 21 (9.2, 11.2) or split aces (14.1(c))."""
        r = self.rules
        if hard_total(hand.cards) > 21:
            for w in hand.wagers:
                self._settle(box, index, w, "bust", "14.2")
            hand.state = SETTLED
            self._discard(box, index, hand, "14.2")
            return
        if hand.total == 21:
            if (
                r.super_bonus
                and not hand.from_split
                and not hand.doubled
                and self.dealer
                and self.dealer[0].rank == 7
                and is_super_bonus_cards(hand.cards)
            ):
                hand.state = SUPER
            elif r.player_21_wins:
                odds = win_odds(r, hand.cards, natural=False, doubled=hand.doubled)
                self._pay_hand(box, index, hand, odds, "9.2")
            else:
                hand.state = STOOD
            return
        if hand.split_aces and not r.hit_split_aces:
            pair = len(hand.cards) == 2 and hand.cards[1].is_ace
            can_resplit = pair and r.resplit_aces and len(box.hands) < r.split_max_hands
            if not can_resplit:
                hand.state = STOOD

    def _advance(self) -> None:
        """Run the automatic steps until a decision is awaited or the round is over."""
        if self.follow_ups is not None or self.phase != PLAYING or self.choosing:
            return
        while self.turn < len(self.order):
            box = self.order[self.turn]
            while self.hand_index < len(box.hands):
                hand = box.hands[self.hand_index]
                if len(hand.cards) == 1 and hand.state == OPEN:  # a split hand's second card
                    self._deal(box, self.hand_index, "13.5")
                    self._after_card(box, self.hand_index, hand)
                if hand.state == OPEN:
                    return
                self.hand_index += 1
            if box.sevens and not self.dealer_card_omitted:
                self._settle_sevens(box, final=True)
            self.turn += 1
            self.hand_index = 0
        self._dealer_turn()

    # ------------------------------------------------------------------ the dealer
    def _dealer_turn(self) -> None:
        """8.5, 14.3, 14.4: the dealer's second card and draws, then settlement."""
        r = self.rules
        live = [h for _, _, h in self.hands()]
        full = any(h.state == STOOD for h in live)
        second = full or any(h.state in (NATURAL, SURRENDERED) for h in live)
        second = second or any(box.insurance for box in self.order)
        # 14.4: no card that cannot change the outcome; 16.4: a card all refused is the
        # dealer's second card
        second = second or self.exposed is not None
        if r.dealer_peeks:
            if second:
                self._reveal()
        elif second:
            if not self.dealer:  # 15.5: the dealer takes the next cards as his/her hand
                self._deal(None, 0, "15.5")
            self._deal(None, 0, "8.5")
        dealer_natural = self.dealer_blackjack and is_pontoon(self.dealer)
        if not r.dealer_peeks:
            self._settle_insurance(dealer_natural)
        if full and not dealer_natural:
            while True:
                t = total(self.dealer)
                soft = t != hard_total(self.dealer)
                if t > 17 or (t == 17 and not (soft and r.dealer_hits_soft_17)):
                    break
                self._deal(None, 0, "14.3")
        self._settle_all(dealer_natural)
        self._finish()

    def _settle_all(self, dealer_natural: bool) -> None:
        r = self.rules
        d = total(self.dealer)
        for box in self.order:
            cap = dict(box.original)  # 13.7: what a dealer pontoon may still take per player
            for i, hand in enumerate(box.hands):
                if hand.state == SURRENDERED:
                    self._settle_surrender(box, hand, voided=dealer_natural)
                elif hand.state == SUPER:
                    self._settle_super(box, i, hand)
                elif hand.state == NATURAL:
                    for w in hand.wagers:
                        if dealer_natural:
                            self._settle(box, i, w, "push", "5.1")
                        else:
                            odds = r.natural_pays
                            self._settle(
                                box, i, w, "win", "9.1", odds=odds, won=winnings(w.amount, odds)
                            )
                elif hand.state == STOOD:
                    if dealer_natural:
                        self._dealer_natural_takes(box, i, hand, cap)
                    else:
                        self._compare(box, i, hand, d)
                hand.state = SETTLED

    def _dealer_natural_takes(self, box: Box, index: int, hand: Hand, cap: dict[str, int]) -> None:
        """13.7, 13.8: a dealer pontoon collects at most each player's original wager from
        the hands still in play (``dealer_natural_takes = original``), or everything."""
        for w in hand.wagers:
            if self.rules.dealer_natural_takes == "all":
                self._settle(box, index, w, "lose", "13.7")
            else:
                lost = min(w.amount, cap[w.player])
                cap[w.player] -= lost
                self._settle(box, index, w, "lose", "13.7", lost=lost)

    def _compare(self, box: Box, index: int, hand: Hand, dealer: int) -> None:
        """5.1: the dealer's bust or the higher total wins; equal totals stand off."""
        p = hand.total
        for w in hand.wagers:
            if dealer > 21 or p > dealer:
                odds = win_odds(self.rules, hand.cards, natural=False, doubled=hand.doubled)
                self._settle(box, index, w, "win", "5.1", odds=odds, won=winnings(w.amount, odds))
            elif p == dealer:
                self._settle(box, index, w, "push", "5.1")
            else:
                self._settle(box, index, w, "lose", "5.1")

    def _settle_super(self, box: Box, index: int, hand: Hand) -> None:
        """11.2: the Super Bonus instead of the odds, and a payment to every other player."""
        winners = {w.player for w in hand.wagers}
        paid = False
        for w in hand.wagers:
            bonus = super_bonus_amount(self.rules, w.amount)
            if bonus is None:
                odds = win_odds(self.rules, hand.cards, natural=False, doubled=False)
                self._settle(box, index, w, "win", "11.1", odds=odds, won=winnings(w.amount, odds))
            else:
                self._settle(box, index, w, "win", "11.2", won=bonus)
                paid = True
        if paid:
            for player in self.balance:
                if player not in winners:
                    self._money("pay", box, index, player, self.rules.super_bonus_others, "11.2")

    def _finish(self) -> None:
        """8.6: the cards are collected in order to the discard rack; the round is over.
        Then the end-of-round procedures: 16.3 (an exposed card left over), 16.8 (damaged
        cards replaced), 16.9 and 16.10 (reshuffle)."""
        for box in self.order:
            self._settle_sevens(box, final=True)
            for w in box.sevens.values():
                if not w.settled:
                    self._settle(box, None, w, "void", SEVENS)
        for box, i, hand in self.hands():
            self._discard(box, i, hand, "8.6")
        self._reveal()
        self.source.discard(self.dealer)
        self._emit("discard", rule="8.6")
        self.phase = OVER
        self.follow_ups = None
        self.choosing = []
        if self.exposed is not None:
            card, self.exposed = self.exposed, None
            self.source.discard([card])
            self._emit("discard", card=card.code, rule=self.book_rule("16.3"))
        for card in self.damaged:
            self._emit("replace", card=card.code, rule=self.book_rule("16.8"))
        self.damaged = []
        if self.shuffle_after is not None:
            self._end_shuffle(self.shuffle_after)
        self._emit("end", rule="8.6")

    def _end_shuffle(self, rule: str) -> None:
        self.shuffle_after = None
        self.source.shuffle(rule)


_ACTION_RULE: Final = {
    "hit": "14.1",
    "stand": "8.3",
    "double": "12",
    "split": "13",
    "surrender": "9.3",
    "rescue": "12",
    "refuse": "16.4",
}
# Pontoon section 16 procedures and their Blackjack 1996 counterparts
_BLACKJACK_RULES: Final = {
    "16.3": "15.6",
    "16.4": "15.7",
    "16.5": "15.8",
    "16.6": "15.9",
    "16.7": "15.10",
    "16.8": "15.11",
}
SEVENS: Final = "super-sevens"
OMITTED_IN_DEAL: Final = "dealer-card-omitted-in-deal"

__all__ = ["Box", "Hand", "Move", "Round", "Wager"]
