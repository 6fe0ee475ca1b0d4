"""The dealer's side of a round: the layout's money, the settlement of every wager, and the
dealer's own hand (5.1, 8.5, 8.6, 9.1-9.4, 10, 11.2, 13.7, 13.8, 14.2-14.4, Super Sevens).

:class:`DealerSteps` is the part of :class:`pontoon.round.Round` that deals cards, moves
money as events and settles: the public *dealer steps* (:meth:`~DealerSteps.emit`,
:meth:`~DealerSteps.deal_card`, :meth:`~DealerSteps.card_reached`, :meth:`~DealerSteps.advance`,
:meth:`~DealerSteps.settle_sevens`, :meth:`~DealerSteps.interim_settlement`,
:meth:`~DealerSteps.void_box`, :meth:`~DealerSteps.finish`) that the round's moves and the
procedures of section 16 are made of, and the settlement they lead to. The round owns the state
(its ``__slots__``); this class says which of it the dealer reads and writes. Money moves only
as ``stake``, ``return``, ``collect`` and ``pay`` events, so house + players + table is always
zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from pontoon.cards import Card
from pontoon.events import Event
from pontoon.hand import hard_total, is_pontoon, is_super_bonus_cards, total
from pontoon.layout import Box, FollowChoice, FollowUps, Hand, Wager
from pontoon.legality import book_rule
from pontoon.rules import RuleSet
from pontoon.settlement import odds_text, super_bonus_amount, win_odds, winnings
from pontoon.shoe import CardSource
from pontoon.vocab import SEVENS, DealerStep, EventKind, HandState, Outcome, Phase

# Local names of the words used on every move (a module global is read faster than an
# enum's class attribute).
BETTING, INSURANCE, PLAYING, OVER = Phase
OPEN, STOOD, NATURAL, SUPER, SETTLED, SURRENDERED = HandState
WIN, LOSE, BUST, PUSH, SURRENDER_OUTCOME, VOID = Outcome
RULES_EVENT, SHUFFLE, BURN, WAGER, DEAL, HOLE, REVEAL, ACTION_EVENT = list(EventKind)[:8]
STAKE, RETURN, COLLECT, PAY, OUTCOME, DISCARD, IRREGULARITY, REPLACE, END = list(EventKind)[8:17]

_make_event = tuple.__new__


class DealerSteps:
    """The dealer's steps and the settlement, on the state of a :class:`pontoon.round.Round`."""

    # The state the dealer reads and writes; the round declares the rest.
    __slots__ = (
        "balance",
        "boxes",
        "choosing",
        "damaged",
        "dealer",
        "dealer_blackjack",
        "dealer_card_omitted",
        "events",
        "exposed",
        "follow_ups",
        "hand_index",
        "hole",
        "house",
        "order",
        "phase",
        "reconstructed",
        "rules",
        "shuffle_after",
        "source",
        "table",
        "turn",
    )

    rules: RuleSet
    source: CardSource
    phase: Phase
    boxes: dict[int, Box]
    order: list[Box]
    dealer: list[Card]
    hole: Card | None
    turn: int
    hand_index: int
    follow_ups: FollowUps | None
    balance: dict[str, int]
    table: int
    house: int
    exposed: Card | None
    dealer_card_omitted: bool
    dealer_blackjack: bool
    choosing: list[int]
    shuffle_after: str | None
    damaged: list[Card]
    events: list[Event]
    reconstructed: bool

    @property
    def over(self) -> bool:
        return self.phase is OVER

    def current(self) -> tuple[Box, Hand] | None:
        """The box and hand whose decision is awaited, or None."""
        if self.phase is not PLAYING or self.turn >= len(self.order):
            return None
        box = self.order[self.turn]
        return box, box.hands[self.hand_index]

    def resume(self) -> None:
        """Go on after a procedure changed the layout (the round's: it closes an insurance
        phase nobody is left to decide, or runs the automatic steps to the next decision)."""
        raise NotImplementedError

    def hands(self) -> Iterator[tuple[Box, int, Hand]]:
        for box in self.order:
            for i, hand in enumerate(box.hands):
                yield box, i, hand

    def book_rule(self, pontoon_rule: str) -> str:
        """A Pontoon section 16 rule number, or its Blackjack 1996 counterpart."""
        return book_rule(self.rules, pontoon_rule)

    def emit(
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
        follow: FollowChoice | None = None,
    ) -> None:
        """Append an event to the round's log."""
        # Built as a plain tuple: the named tuple's own constructor costs a third more here.
        event = (kind, box, hand, player, card, amount, detail, odds, rule, by, follow)
        self.events.append(_make_event(Event, event))

    def deal_card(self, box: Box | None, index: int, rule: str) -> Card:
        """Deal the next card (an exposed card first, 16.4) to hand ``index`` of ``box``, or
        to the dealer when ``box`` is None."""
        card = self.exposed
        if card is not None:
            self.exposed = None
            rule = self.book_rule("16.4")
        else:
            card = self.source.draw()
        # The most frequent events are built as plain tuples in place (see emit).
        event: tuple[object, ...]
        if box is None:
            self.dealer.append(card)
            event = (DEAL, None, None, None, card.code, None, None, None, rule, None, None)
            self.events.append(_make_event(Event, event))
            return card
        box.hands[index].cards.append(card)
        event = (DEAL, box.number, index, None, card.code, None, None, None, rule, None, None)
        self.events.append(_make_event(Event, event))
        if len(box.first_cards) < 3:
            box.first_cards.append(card)
            if box.sevens and not self.dealer_card_omitted:  # 15.5: wait for the cards
                self.settle_sevens(box, final=False)
        return card

    def card_reached(self, box: Box, index: int, hand: Hand) -> None:
        """A card has reached an open hand: bust (14.2), 21 (9.2, 11.2) or split aces (14.1(c))."""
        r = self.rules
        if hard_total(hand.cards) > 21:
            for w in hand.wagers:
                self._settle(box, index, w, BUST, "14.2")
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

    def advance(self) -> None:
        """Run the automatic steps until a decision is awaited or the round is over."""
        if self.follow_ups is not None or self.phase is not PLAYING or self.choosing:
            return
        while self.turn < len(self.order):
            box = self.order[self.turn]
            while self.hand_index < len(box.hands):
                hand = box.hands[self.hand_index]
                if len(hand.cards) == 1 and hand.state is OPEN:  # a split hand's second card
                    self.deal_card(box, self.hand_index, "13.5")
                    self.card_reached(box, self.hand_index, hand)
                if hand.state is OPEN:
                    return
                self.hand_index += 1
            if box.sevens and not self.dealer_card_omitted:
                self.settle_sevens(box, final=True)
            self.turn += 1
            self.hand_index = 0
        self._dealer_turn()

    def interim_settlement(self) -> None:
        """9.1: a pontoon is paid at once, before any further card is dealt."""
        for box in self.order:
            hand = box.hands[0]
            if is_pontoon(hand.cards):
                if self.rules.player_21_wins or self.rules.dealer_peeks:
                    self._pay_hand(box, 0, hand, self.rules.natural_pays, "9.1")
                else:
                    hand.state = NATURAL

    def settle_sevens(self, box: Box, final: bool) -> None:
        """Super Sevens, settled as the box's first three cards fall: a first card 7 pays 3:1,
        7-7 50:1 (suited 100:1), 7-7-7 500:1 (suited 5000:1); anything else loses."""
        r = self.rules
        c = box.first_cards
        for w in box.sevens.values():
            if w.settled or not c:
                continue
            odds: Fraction | None = None
            if c[0].rank != 7:
                self._settle(box, None, w, LOSE, SEVENS)
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
            self._settle(box, None, w, WIN, SEVENS, odds=odds, won=winnings(w.amount, odds))

    def void_wager(self, box: Box, index: int | None, w: Wager, rule: str) -> None:
        """Void a wager: the player ends with exactly the stake back, even if the wager was
        already settled (15.5(a): whether or not the hand has exceeded 21)."""
        if not w.settled:
            self._settle(box, index, w, VOID, rule)
            return
        if w.net < 0:
            self._money(PAY, box, index, w.player, -w.net, rule)
        elif w.net > 0:
            self._stake(box, index, w.player, w.net, rule)
            self._money(COLLECT, box, index, w.player, w.net, rule)
        self.emit(OUTCOME, box=box.number, hand=index, player=w.player, detail=VOID, rule=rule)
        w.outcome = VOID
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
        if all(h.state is SETTLED and all(w.outcome is VOID for w in h.wagers) for h in box.hands):
            for w in [*box.insurance.values(), *box.sevens.values()]:
                self.void_wager(box, None, w, rule)
        fu = self.follow_ups
        if fu is not None and self.order[self.turn] is box and box.hands[fu.hand].state is SETTLED:
            self.follow_ups = None  # 15.3: no choice is left on a void hand
        if box.number in self.choosing:
            self.choosing.remove(box.number)

    def finish(self) -> None:
        """8.6: the cards are collected in order to the discard rack; the round is over.
        Then the end-of-round procedures: 16.3 (an exposed card left over), 16.8 (damaged
        cards replaced), 16.9 and 16.10 (reshuffle)."""
        for box in self.order:
            self.settle_sevens(box, final=True)
            for w in box.sevens.values():
                if not w.settled:
                    self._settle(box, None, w, VOID, SEVENS)
        for box, i, hand in self.hands():
            self._discard(box, i, hand, "8.6")
        self._reveal()
        self.source.discard(self.dealer)
        self.emit(DISCARD, rule="8.6")
        self.phase = OVER
        self.follow_ups = None
        self.choosing = []
        if self.exposed is not None:
            card, self.exposed = self.exposed, None
            self.source.discard([card])
            self.emit(DISCARD, card=card.code, rule=self.book_rule("16.3"))
        for card in self.damaged:
            self.emit(REPLACE, card=card.code, rule=self.book_rule("16.8"))
        self.damaged = []
        if self.shuffle_after is not None:
            rule, self.shuffle_after = self.shuffle_after, None
            self.source.shuffle(rule)
        self.emit(END, rule="8.6")

    def _stake(self, box: Box, hand: int | None, player: str, amount: int, rule: str) -> None:
        self.balance[player] = self.balance.get(player, 0) - amount
        self.table += amount
        event = (STAKE, box.number, hand, player, None, amount, None, None, rule, None, None)
        self.events.append(_make_event(Event, event))

    def _money(
        self, kind: EventKind, box: Box, hand: int | None, player: str, amount: int, rule: str
    ) -> None:
        if amount <= 0:
            return
        if kind is RETURN:
            self.table -= amount
            self.balance[player] += amount
        elif kind is COLLECT:
            self.table -= amount
            self.house += amount
        else:  # pay
            self.house -= amount
            self.balance[player] += amount
        event = (kind, box.number, hand, player, None, amount, None, None, rule, None, None)
        self.events.append(_make_event(Event, event))

    def _settle(
        self,
        box: Box,
        hand: int | None,
        w: Wager,
        outcome: Outcome,
        rule: str,
        *,
        odds: Fraction | None = None,
        won: int = 0,
        lost: int | None = None,
    ) -> None:
        """Settle one wager: ``won`` from the house, ``lost`` (default all of it, on a loss,
        or none) to the house, the rest of the stake back to the player."""
        if lost is None:
            lost = w.amount if outcome is LOSE or outcome is BUST else 0
        text = odds_text(odds) if odds is not None else None
        event = (OUTCOME, box.number, hand, w.player, None, None, outcome, text, rule, None, None)
        self.events.append(_make_event(Event, event))
        self._money(COLLECT, box, hand, w.player, lost, rule)
        self._money(RETURN, box, hand, w.player, w.amount - lost, rule)
        self._money(PAY, box, hand, w.player, won, rule)
        w.settled = True
        w.outcome = LOSE if outcome is BUST else outcome
        w.odds = odds
        w.net = won - lost

    def _discard(self, box: Box, index: int, hand: Hand, rule: str) -> None:
        if not hand.discarded:
            hand.discarded = True
            self.source.discard(hand.cards)
            event = (DISCARD, box.number, index, None, None, None, None, None, rule, None, None)
            self.events.append(_make_event(Event, event))

    def _pay_hand(self, box: Box, index: int, hand: Hand, odds: Fraction, rule: str) -> None:
        for w in hand.wagers:
            self._settle(box, index, w, WIN, rule, odds=odds, won=winnings(w.amount, odds))
        hand.state = SETTLED
        self._discard(box, index, hand, rule)

    def _settle_insurance(self, dealer_natural: bool) -> None:
        odds = self.rules.insurance_pays
        for box in self.order:
            for w in box.insurance.values():
                if w.settled:  # void (16.5)
                    continue
                if dealer_natural:
                    self._settle(box, None, w, WIN, "10", odds=odds, won=winnings(w.amount, odds))
                else:
                    self._settle(box, None, w, LOSE, "10")

    def _peek(self) -> None:
        """Peek game: with an ace or ten up, the dealer looks at the hole card; a dealer
        blackjack ends the round at once."""
        up = self.dealer[0]
        if not (up.is_ace or up.value == 10):
            return
        assert self.hole is not None
        natural = is_pontoon([up, self.hole])
        self.emit(ACTION_EVENT, detail=DealerStep.PEEK, rule="8.5")
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
                            won = winnings(w.amount, odds)
                            self._settle(box, 0, w, WIN, "9.1", odds=odds, won=won)
                        else:
                            self._settle(box, 0, w, PUSH, "5.1")
                    else:
                        self._settle(box, 0, w, LOSE, "5.1")
                hand.state = SETTLED
            self.finish()

    def _reveal(self) -> None:
        if self.hole is not None:
            card = self.hole
            self.hole = None
            self.dealer.append(card)
            self.emit(REVEAL, card=card.code, rule="8.5")

    def _settle_surrender(self, box: Box, hand: Hand, voided: bool) -> None:
        for w in hand.wagers:
            if voided:
                self._settle(box, 0, w, LOSE, "9.4")
            else:
                kept = winnings(w.amount, self.rules.surrender_returns)
                self._settle(box, 0, w, SURRENDER_OUTCOME, "9.3", lost=w.amount - kept)
        hand.state = SETTLED
        self._discard(box, 0, hand, "9.3")

    def _dealer_turn(self) -> None:
        """8.5, 14.3, 14.4: the dealer's second card and draws, then settlement."""
        r = self.rules
        live = [h for _, _, h in self.hands()]
        full = any(h.state is STOOD for h in live)
        second = full or any(h.state is NATURAL or h.state is SURRENDERED for h in live)
        second = second or any(box.insurance for box in self.order)
        # 14.4: no card that cannot change the outcome; 16.4: a card all refused is the
        # dealer's second card
        second = second or self.exposed is not None
        if r.dealer_peeks:
            if second:
                self._reveal()
        elif second:
            if not self.dealer:  # 15.5: the dealer takes the next cards as his/her hand
                self.deal_card(None, 0, "15.5")
            self.deal_card(None, 0, "8.5")
        dealer_natural = self.dealer_blackjack and is_pontoon(self.dealer)
        if not r.dealer_peeks:
            self._settle_insurance(dealer_natural)
        if full and not dealer_natural:
            while True:
                t = total(self.dealer)
                soft = t != hard_total(self.dealer)
                if t > 17 or (t == 17 and not (soft and r.dealer_hits_soft_17)):
                    break
                self.deal_card(None, 0, "14.3")
        self._settle_all(dealer_natural)
        self.finish()

    def _settle_all(self, dealer_natural: bool) -> None:
        r = self.rules
        d = total(self.dealer)
        for box in self.order:
            cap = dict(box.original)  # 13.7: what a dealer pontoon may still take per player
            for i, hand in enumerate(box.hands):
                state = hand.state
                if state is SURRENDERED:
                    self._settle_surrender(box, hand, voided=dealer_natural)
                elif state is SUPER:
                    self._settle_super(box, i, hand)
                elif state is NATURAL:
                    for w in hand.wagers:
                        if dealer_natural:
                            self._settle(box, i, w, PUSH, "5.1")
                        else:
                            odds = r.natural_pays
                            won = winnings(w.amount, odds)
                            self._settle(box, i, w, WIN, "9.1", odds=odds, won=won)
                elif state is STOOD:
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
                self._settle(box, index, w, LOSE, "13.7")
            else:
                lost = min(w.amount, cap[w.player])
                cap[w.player] -= lost
                self._settle(box, index, w, LOSE, "13.7", lost=lost)

    def _compare(self, box: Box, index: int, hand: Hand, dealer: int) -> None:
        """5.1: the dealer's bust or the higher total wins; equal totals stand off."""
        p = hand.total
        for w in hand.wagers:
            if dealer > 21 or p > dealer:
                odds = win_odds(self.rules, hand.cards, natural=False, doubled=hand.doubled)
                self._settle(box, index, w, WIN, "5.1", odds=odds, won=winnings(w.amount, odds))
            elif p == dealer:
                self._settle(box, index, w, PUSH, "5.1")
            else:
                self._settle(box, index, w, LOSE, "5.1")

    def _settle_super(self, box: Box, index: int, hand: Hand) -> None:
        """11.2: the Super Bonus instead of the odds, and a payment to every other player."""
        winners = {w.player for w in hand.wagers}
        paid = False
        for w in hand.wagers:
            bonus = super_bonus_amount(self.rules, w.amount)
            if bonus is None:
                odds = win_odds(self.rules, hand.cards, natural=False, doubled=False)
                self._settle(box, index, w, WIN, "11.1", odds=odds, won=winnings(w.amount, odds))
            else:
                self._settle(box, index, w, WIN, "11.2", won=bonus)
                paid = True
        if paid:
            for player in self.balance:
                if player not in winners:
                    self._money(PAY, box, index, player, self.rules.super_bonus_others, "11.2")


__all__ = ["DealerSteps"]
