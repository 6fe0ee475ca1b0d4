"""Pictures of the environment's round: text (``"ansi"``) and an RGB image (``"rgb_array"``,
drawn with numpy), both read from the round the round engine replays
(:class:`pontoon.env.record.RoundRecord`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from pontoon.cards import Card
from pontoon.env.record import PLAYER, RoundRecord
from pontoon.hand import total
from pontoon.money import dollars

Image = np.ndarray[Any, np.dtype[np.uint8]]


def ansi(record: RoundRecord, obs: dict[str, Any], names: Sequence[str]) -> str:
    """The layout as text: the dealer's cards, each box's hands, the net, the legal actions."""
    rnd = record.round
    lines = [f"{record.spec.rules.name}: {len(record.log)} cards dealt or noted this round"]
    if rnd.dealer:
        hidden = " ??" if rnd.hole is not None else ""
        shown = " ".join(c.code for c in rnd.dealer)
        lines.append(f"dealer: {shown}{hidden} ({total(rnd.dealer)})")
    for box in rnd.order:
        for i, hand in enumerate(box.hands):
            cards = " ".join(c.code for c in hand.cards)
            w = hand.wager_of(PLAYER)
            stake = dollars(w.amount) if w is not None else "-"
            lines.append(
                f"box {box.number} hand {i + 1}: {cards} ({hand.total}) {hand.state.value} {stake}"
            )
    lines.append(f"net {dollars(rnd.net(PLAYER))}")
    legal = [n for n, ok in zip(names, obs.get("action_mask", ()), strict=False) if ok]
    lines.append("legal: " + (", ".join(legal) if legal else "none (the round is over)"))
    return "\n".join(lines) + "\n"


# 3 x 5 glyphs of the ranks (A 2-9 T J Q K), one string of 15 bits each, row by row
GLYPHS: Final = {
    "A": "010101111101101",
    "2": "111001111100111",
    "3": "111001111001111",
    "4": "101101111001001",
    "5": "111100111001111",
    "6": "111100111101111",
    "7": "111001001001001",
    "8": "111101111101111",
    "9": "111101111001111",
    "T": "111010010010010",
    "J": "001001001101111",
    "Q": "111101101111001",
    "K": "101110100110101",
    "?": "111001011000010",
}
SCALE: Final = 3
CARD_W: Final = 5 * SCALE + 6
CARD_H: Final = 7 * SCALE + 10
FELT: Final = (20, 90, 50)
RED: Final = (190, 20, 30)
BLACK: Final = (10, 10, 10)


def _card(img: Image, x: int, y: int, card: Card | None) -> None:
    img[y : y + CARD_H, x : x + CARD_W] = (250, 250, 245)
    if card is None:
        img[y + 2 : y + CARD_H - 2, x + 2 : x + CARD_W - 2] = (40, 60, 160)
        return
    color = RED if card.suit in ("H", "D") else BLACK
    glyph = GLYPHS.get(card.code[:-1][-1:], GLYPHS["?"])
    for k, bit in enumerate(glyph):
        if bit == "1":
            gy, gx = divmod(k, 3)
            top, left = y + 3 + gy * SCALE, x + 3 + gx * SCALE
            img[top : top + SCALE, left : left + SCALE] = color
    # the suit as a bar of its colour under the rank
    img[y + CARD_H - 6 : y + CARD_H - 3, x + 3 : x + CARD_W - 3] = color


def rgb(record: RoundRecord) -> Image:
    """The layout as an image: the dealer's cards on top, a row per hand below."""
    rnd = record.round
    rows: list[list[Card | None]] = [[*rnd.dealer, *([None] if rnd.hole is not None else [])]]
    rows += [list(hand.cards) for box in rnd.order for hand in box.hands]
    width = max(8, *(len(r) for r in rows)) * (CARD_W + 4) + 8
    img = np.empty((len(rows) * (CARD_H + 6) + 8, width, 3), np.uint8)
    img[:] = FELT
    for r, cards in enumerate(rows):
        for k, card in enumerate(cards):
            _card(img, 6 + k * (CARD_W + 4), 6 + r * (CARD_H + 6), card)
    return img


__all__ = ["ansi", "rgb"]
