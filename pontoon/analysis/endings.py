"""How a hand ends, as the distribution of a round counts it: what it nets (in cents), why,
on how many wagers, and whether it stood (13.7 needs that when the dealer makes a pontoon).

An :class:`~pontoon.vocab.Ending` names the reason; :class:`Endings` numbers every distinct
(cents, reason, stake, stood) a game's hands can end with, so the forward pass
(:mod:`pontoon.analysis.reach`) accumulates probabilities into one dense array per context.
Per composition and dealer outcome it looks up what standing, or arriving at 21, ends as.

>>> from pontoon.analysis.game import Game
>>> from pontoon.rules import load_rules
>>> game = Game(load_rules("nz-pontoon"), 500)
>>> table = Endings(game)
>>> i = game.comps.index[(1, 1, 1, 1, 1, 0, 0, 0, 0, 0)]      # A-2-3-4-5: soft 15
>>> [str(table.ends[e]) for e in table.stand1[i]]            # 17-21, bust, pontoon
['-500 loss ×1', '-500 loss ×1', '-500 loss ×1', '-500 loss ×1', '-500 loss ×1', \
'500 dealer_bust ×1', '-500 dealer_pontoon ×1 stood']
>>> i = game.comps.index[(1, 1, 1, 1, 1, 1, 0, 0, 0, 0)]      # A-2-3-4-5-6: 21 of six cards
>>> str(table.ends[table.paid1[i]]), str(table.ends[table.paid2[i]])   # 11.1: 2:1, not doubled
('1000 six_card_21 ×1', '1000 twenty_one ×2')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pontoon.analysis.composition import Comp, Ints
from pontoon.analysis.dealer import BUST, NATURAL
from pontoon.analysis.payoffs import cards_of
from pontoon.hand import total
from pontoon.vocab import Ending

if TYPE_CHECKING:
    from pontoon.analysis.game import Game


@dataclass(frozen=True)
class End:
    """One way a hand ends: ``cents`` net, ``why``, on ``stake`` wagers, ``stood`` (it was
    standing when the dealer's pontoon came: 13.7 takes the original wager once per box)."""

    cents: int
    why: Ending
    stake: int
    stood: bool = False

    def __str__(self) -> str:
        return f"{self.cents} {self.why} ×{self.stake}" + (" stood" if self.stood else "")


class Endings:
    """Every ending of one game's hands, numbered; ``stand1``/``stand2`` (M, 7): what standing
    ends as for each composition and dealer outcome, on one or two wagers; ``paid1``/``paid2``
    (M,): a 21 paid at once (9.2) or, where 21 does not win at once, -1."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.ends: list[End] = []
        self._index: dict[End, int] = {}
        self._rows: dict[tuple[int, int, int, Ending], Ints] = {}
        w = game.wager
        self.bust = (self.of(End(-w, Ending.BUST, 1)), self.of(End(-2 * w, Ending.BUST, 2)))
        self.rescue = self.of(End(-w, Ending.RESCUE, 2))
        self.surrender = self._surrender_row()
        c = game.comps
        m = len(c)
        self.stand1 = np.zeros((m, 7), dtype=np.int64)
        self.stand2 = np.zeros((m, 7), dtype=np.int64)
        self.paid1 = np.full(m, -1, dtype=np.int64)
        self.paid2 = np.full(m, -1, dtype=np.int64)
        for i in range(m):
            if c.ncards[i] < 2:
                continue
            for stake, win, stood, paid in (
                (1, game.win1[i], self.stand1, self.paid1),
                (2, game.win2[i], self.stand2, self.paid2),
            ):
                won = Ending.WIN
                if c.total[i] == 21:  # (a 21 at even money needs no look at its cards)
                    even = win == stake
                    won = Ending.TWENTY_ONE if even else self._won(c.comps[i], stake == 2)
                stood[i] = self.stand_row(int(c.total[i]), game.pay.cents(win), stake, won)
                if game.rules.player_21_wins and c.total[i] == 21:
                    paid[i] = self.of(End(game.pay.cents(win), won, stake))

    def of(self, end: End) -> int:
        """The number of ``end`` (numbered when first seen)."""
        if end not in self._index:
            self._index[end] = len(self.ends)
            self.ends.append(end)
        return self._index[end]

    def __len__(self) -> int:
        return len(self.ends)

    def _won(self, comp: Comp, doubled: bool = False) -> Ending:
        cards = cards_of(comp)
        if len(cards) < 2 or total(cards) != 21:
            return Ending.WIN
        return self.game.pay.paid(cards, doubled=doubled)[1]

    def _surrender_row(self) -> Ints:
        """(7,) what a surrender ends as against each dealer outcome (9.3, 9.4)."""
        g = self.game
        w = g.wager
        gone = End(-g.pay.cents(g.pay.surrender_loss), Ending.SURRENDER, 1)
        row = np.full(7, self.of(gone), dtype=np.int64)
        if not g.peek and g.rules.surrender == "void-on-pontoon":  # 9.4
            row[NATURAL] = self.of(End(-w, Ending.DEALER_PONTOON, 1))
        return row

    def stand_row(self, total: int, win: int, stake: int, won: Ending) -> Ints:
        """(7,) the endings of a hand of ``total`` standing on ``stake`` wagers, winning
        ``win`` cents, against each dealer outcome (17-21, bust, pontoon)."""
        key = (total, win, stake, won)
        if key not in self._rows:
            self._rows[key] = self._stand_row(total, win, stake, won)
        return self._rows[key]

    def _stand_row(self, total: int, win: int, stake: int, won: Ending) -> Ints:
        g = self.game
        w = g.wager
        plain = won in (Ending.WIN, Ending.TWENTY_ONE)
        row = np.zeros(7, dtype=np.int64)
        for o in range(5):
            t = 17 + o
            if total > t:
                end = End(win, Ending.WIN if plain else won, stake)
            elif total == t:
                end = End(0, Ending.PUSH, stake)
            else:
                end = End(-stake * w, Ending.LOSS, stake)
            row[o] = self.of(end)
        row[BUST] = self.of(End(win, Ending.DEALER_BUST if plain else won, stake))
        if g.peek:  # never reached: the round ended at the peek
            row[NATURAL] = self.of(End(-stake * w, Ending.DEALER_PONTOON, stake))
        else:
            lost = g.pay.cents(g.pay.natural_loss(stake == 2))
            row[NATURAL] = self.of(End(-lost, Ending.DEALER_PONTOON, stake, stood=True))
        return row


def endings_of(game: Game) -> Endings:
    """The game's one table of endings (made on first use): the expected value's exact
    two-hand splits and the distribution number their endings alike."""
    table = game.endings
    if not isinstance(table, Endings):
        table = game.endings = Endings(game)
    return table
