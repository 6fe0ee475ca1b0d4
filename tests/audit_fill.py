"""Stores for the audit tests: players who play the optimal chart at tables recorded through
the store's own writer, dealt from an honest shoe or by a cheat (a test double: a dealer who
deals seconds to himself, taking the better of the two top cards whenever he draws)."""

from __future__ import annotations

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.audit.theory import theory
from pontoon.cards import Card
from pontoon.hand import total
from pontoon.round import Round
from pontoon.rules import load_rules, rules_json
from pontoon.shoe import Shoe
from pontoon.sim.reference import play_out
from pontoon.store.db import Store
from pontoon.store.recorder import TableLog


class DealsSeconds(Shoe):
    """A shoe whose dealer, drawing to his own hand, takes whichever of the two top cards
    gives him the better total (the other stays on top)."""

    round: Round | None = None

    def draw(self) -> Card:
        rnd, cards = self.round, self._cards
        dealer_draws = rnd is not None and rnd.phase == "playing" and rnd.current() is None
        if dealer_draws and len(cards) >= 2 and _better(rnd.dealer, cards[-2], cards[-1]):
            cards[-1], cards[-2] = cards[-2], cards[-1]
        return super().draw()


def _better(dealer: list[Card], a: Card, b: Card) -> bool:
    """Whether ``a`` gives the dealer a better total than ``b``: the highest not over 21."""
    ta, tb = total([*dealer, a]), total([*dealer, b])
    return (ta <= 21, ta) > (tb <= 21, tb)


def optimal() -> Chart:
    """nz-pontoon's optimal chart: the report's theory's (analysed once per process, and so
    shared with the report the tests read)."""
    return theory(rules_json(load_rules("nz-pontoon"))).chart


def fill(
    url: str,
    table: str,
    rounds: int,
    *,
    seed: int = 1,
    rigged: bool = False,
    players: tuple[str, ...] = ("ana", "ben", "cy"),
    wager: int = 500,
    wallet: bool = False,
) -> None:
    """``rounds`` rounds of ``players`` (a box each) at ``table``, recorded in the store;
    ``wallet``: their built-in wallets stand behind the table (they have accounts)."""
    rules = load_rules("nz-pontoon")
    chart = optimal()
    rescues = chart.rescues()
    rng = np.random.default_rng(seed)
    shoe = DealsSeconds(rules, rng) if rigged else Shoe(rules, rng)
    with Store(url) as store:
        log = TableLog(store, table, top_up=True, wallet=wallet)
        for _ in range(rounds):
            rnd = Round(rules, shoe)
            if isinstance(shoe, DealsSeconds):
                shoe.round = rnd
            for box, p in enumerate(players, start=1):
                rnd.place_wager(box, p, wager)
            rnd.deal()
            play_out(rnd, chart, rescues)
            log.start(rnd).commit(shoe, cash_out=True)
