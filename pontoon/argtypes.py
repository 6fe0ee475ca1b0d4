"""The command line's number types. An option's value is refused by argparse, in one line with
exit 2, when it cannot be what the code below it holds: an integer a 64-bit column and the
compiled kernels can hold, written in ASCII digits; a seed, 0 or more; a finite float; a
table's name the store can keep; a file to write, in a folder that is there. Each
command still checks its own bounds (a wager's band, the boxes of a layout).

>>> whole("500"), seed("7"), finite("0.5")
(500, 7, 0.5)
>>> whole("99999999999999999999")
Traceback (most recent call last):
argparse.ArgumentTypeError: 99999999999999999999 is too large a number
>>> seed("-1")
Traceback (most recent call last):
argparse.ArgumentTypeError: a seed is 0 or more, not -1
>>> finite("nan")
Traceback (most recent call last):
argparse.ArgumentTypeError: not a finite number: 'nan'
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

LARGEST = 2**63 - 1  # a signed 64-bit integer's


def whole(text: str) -> int:
    """A whole number, in ASCII digits, that 64 bits hold."""
    digits = text.strip().removeprefix("-").removeprefix("+")
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    value = int(text)
    if abs(value) > LARGEST:
        raise argparse.ArgumentTypeError(f"{value} is too large a number")
    return value


def seed(text: str) -> int:
    """A generator's seed: a whole number, 0 or more."""
    value = whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is 0 or more, not {value}")
    return value


def table(text: str) -> str:
    """A table's name as the store keeps it: 1 to 64 characters."""
    if not 1 <= len(text) <= 64:
        raise argparse.ArgumentTypeError(f"a table's name is 1 to 64 characters, not {len(text)}")
    if text.startswith("@"):
        raise argparse.ArgumentTypeError(
            f"a table's name may not start with '@' (kept for the house's own record): {text!r}"
        )
    return text


def outfile(text: str) -> str:
    """A file to write at the end of a command: its folder must be there, and the name not a
    folder's — found before the work, not after it (a ten-minute analysis, then no folder)."""
    path = Path(text)
    if not text or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file to write")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: no folder {str(path.parent)!r}")
    return text


def finite(text: str) -> float:
    """A number that is neither infinite nor NaN."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value
