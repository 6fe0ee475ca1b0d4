"""``pontoon train``: drills graded against the exact analysis (docs/players/train.md).

``grade`` values every legal play of a decision and says what a play cost; ``schedule``
brings a learner's weak cells back on a spaced-repetition schedule; ``strategy`` deals the
hands from a real shoe through the round engine and asks the learner; ``count`` drills the
running and true count, ``dealer`` the payouts and section 16's procedures; ``records``
keeps each learner's decisions in the round store. This package's own names are the
vocabulary the command line reads without loading the rest (the round engine, the analysis).
"""

from __future__ import annotations

from typing import Final

RESCUE: Final = "rescue"
MODES: Final = ("all", "hard", "soft", "pairs", "surrender", "rescue", "weak")  # what is asked
KEYS: Final = {"h": "hit", "s": "stand", "d": "double", "p": "split", "r": "surrender", "x": RESCUE}
"""The keys a learner may type for each play (the command line's and the page's words)."""
