"""``pontoon train``: drills graded against the exact analysis (docs/train.md).

``grade`` values every legal play of a decision and says what a play cost; ``schedule``
brings a learner's weak cells back on a spaced-repetition schedule; ``strategy`` deals the
hands from a real shoe through the round engine and asks the learner; ``count`` drills the
running and true count, ``dealer`` the payouts and section 16's procedures; ``records``
keeps each learner's decisions in the round store.
"""
