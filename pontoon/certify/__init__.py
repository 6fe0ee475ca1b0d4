"""Shuffle certification, as gaming laboratories test a shuffle (GLI-11, GLI-19 style).

The real shoe (:class:`pontoon.shoe.Shoe`) is shuffled many times through the code a live
table runs, with the secure generator the tables use (or a seeded one), and the shoes are
put to statistical tests at 99 %: each card's position, runs, serial correlation, adjacent
pairs, consecutive shoes, the burn card, and a check of the cutting card.

- :mod:`pontoon.certify.tally`: what is counted of each shoe (arrays that add up).
- :mod:`pontoon.certify.run`: the shuffling, in chunks, on local processes.
- :mod:`pontoon.certify.tests`: the statistics and the verdict.
- :mod:`pontoon.certify.report`: the JSON document, the terminal table, the HTML report.
- :mod:`pontoon.certify.commands`: ``pontoon certify``.

Method, formulas and measured speed: docs/operators/certification.md.
"""
