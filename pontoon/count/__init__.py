"""Advantage play: what a card counter can do, and what a casino guards against.

- :mod:`pontoon.count.eor`: effects of removal, exact, from the analysis of each shoe.
- :mod:`pontoon.count.judge`: a count's betting correlation, playing efficiency and insurance
  correlation, and the best simple integer count for a rule set.
- :mod:`pontoon.count.commands`: ``pontoon count eor|judge``.
"""
