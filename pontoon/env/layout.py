"""The learning environment's state and parameters as flat int64 arrays: the indices both
the compiled steps (:mod:`pontoon.env.kernel`) and the Python side read.

A table's whole state is one row of ints (``W[table]``): the scalars below, then each hand
slot's fields and cards, each box's fields and hand order, the dealer's cards, the counts of
the card values seen since the shuffle, the round's card log, the shoe, and room to count
each card code (16.7's refill). The parameters are :func:`pontoon.sim.compiled.compile_rules`'
array followed by the ``E_`` fields and the tables they point to
(:class:`pontoon.env.spec.TableSpec`).

>>> offsets(1, 4, 312, 0)[-1]  # ints of state for one box, four hands, six decks, no log
560
"""

from __future__ import annotations

from typing import Final

from pontoon.sim import compiled as C

MAXC: Final = 24  # cards in one hand (21 one-valued aces and a bust card at most)
NVAL: Final = 10  # card values, A (1) to ten-valued (10)
NCODES: Final = 52  # card codes (suit * 13 + rank - 1)

# phases of a table
BET, INS, DECIDE, OVER = range(4)
PHASE_NAMES: Final = ("bet", "insurance", "decide", "over")

# hand states, as in pontoon.round (and the compiled kernel)
OPEN, STOOD, NATURAL_WAIT, SUPER_WAIT, SETTLED, SURRENDER_WAIT = range(6)

# a table's scalars
(
    PH,  # phase
    TURN,  # the box in turn (0-based)
    HI,  # the hand in play on it
    IB,  # the box whose insurance is asked
    POS,  # shoe[:POS] have left the shoe
    NCARDS,  # cards in the shoe
    BCUT,  # cards behind the cutting card
    CUTR,  # the cutting card came out before a 16.7 reshuffle of the discards
    NSHUF,  # shuffles so far (each on its own stream)
    STAKE,  # the round's wager on each box, cents
    NET,  # the round's net so far, cents
    DN,  # the dealer's cards, hard total, ace
    DH,
    DA,
    HOLE,  # the hole card (peek game), -1 none
    INSURED,  # some box is insured
    LOGN,  # entries in the round's log
    KEY,  # the shoe's key (uint64 bits)
    LEGAL,  # the legal actions' bits, as the last observation showed them
    VOID,  # 16.7 found no card, every card being on the layout: the round is void (16.5)
) = range(20)
NT: Final = 20

# a hand slot's fields (box b's hands use slots b * maxh ...)
HN, HARD, ACE, ST, DBL, FSP, SAC, DISC, ACTED, AMT = range(10)
NHF: Final = 10
# a box's fields
NH, INSA = range(2)  # hands on the box; insurance staked (cents)
NBF: Final = 2

# log entries: a card's code (0-51) drawn, or a note
LOG_SHUFFLE: Final = (-1, -2, -3, -4)  # shuffles under rules 7, 8.7, 8.8, 16.7
SHUFFLE_RULES: Final = ("7", "8.7", "8.8", "16.7")
LOG_BURN: Final = -100  # -100 - code: the burn card (8.1)

# observation rows (OB[row, table]); then the counts and the action mask
OBS_KEYS: Final = (
    "phase",
    "box",
    "hand",
    "hands",
    "total",
    "soft",
    "cards",
    "pair",
    "doubled",
    "from_split",
    "split_aces",
    "acted",
    "up",
    "remaining",
)
NOBS: Final = len(OBS_KEYS)

# the actions' fixed numbers; further double fractions and the bets follow them
HIT, STAND, DOUBLE, SPLIT, SURRENDER, RESCUE, INSURE, NO_INSURANCE = range(8)
NFIXED: Final = 8

# parameters after the compiled rule array
E0: Final = C.NPARAMS
(
    E_BOXES,
    E_MAXH,
    E_NTMPL,
    E_INS,  # insurance offered (10)
    E_INS_MAX_NUM,
    E_INS_MAX_DEN,
    E_INS_PAYS_NUM,
    E_INS_PAYS_DEN,
    E_HSA,  # hit_split_aces (14.1(c))
    E_NA,  # actions
    E_NDBL,  # double fractions
    E_NBETS,
    E_UNIT,  # the reward's unit, cents
    E_LOGMAX,
    E_L,  # ints of state per table
    E_OHC,  # offsets into a table's state
    E_OBX,
    E_OORD,
    E_ODC,
    E_OCNT,
    E_OLOG,
    E_OSH,
    E_OTMPL,  # offsets into the parameter array
    E_ODBL,
    E_OBETS,
    E_OMASK,
    E_ODDS3,
    E_ODDSN,
) = range(E0, E0 + 28)
NPP_HEAD: Final = E0 + 28


def offsets(boxes: int, maxh: int, ntmpl: int, logmax: int) -> tuple[int, ...]:
    """(hand cards, boxes, hand order, dealer, counts, log, shoe, total) offsets of a row;
    the shoe's ``ntmpl`` cards are followed by the scratch of :data:`NCODES` counts."""
    nhs = boxes * maxh
    ohc = NT + nhs * NHF
    obx = ohc + nhs * MAXC
    oord = obx + boxes * NBF
    odc = oord + nhs
    ocnt = odc + MAXC
    olog = ocnt + NVAL
    osh = olog + logmax
    return ohc, obx, oord, odc, ocnt, olog, osh, osh + ntmpl + NCODES
