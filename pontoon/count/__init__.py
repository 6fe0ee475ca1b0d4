"""Advantage play: what a card counter can do, and what a casino guards against.

- :mod:`pontoon.count.eor`: effects of removal, exact, from the analysis of each shoe.
- :mod:`pontoon.count.judge`: a count's betting correlation, playing efficiency and insurance
  correlation, and the best simple integer count for a rule set.
- :mod:`pontoon.count.curve`: the EV by true count, the line from the effects of removal
  beside the simulator's curve.
- :mod:`pontoon.count.indices`: every chart cell's index, from the shoe a count expects at
  each true count; the charts by true count that ``simulate --indices`` plays.
- :mod:`pontoon.count.ramp`: Kelly bets by true count and the ramp's win, SCORE and risk.
- :mod:`pontoon.count.commands`: ``pontoon count eor|judge|indices|ramp``.
"""
