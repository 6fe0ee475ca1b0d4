"""Money as people read and type it. Amounts are always whole cents (the minor unit).

>>> dollars(123456), signed(-5), signed(750)
('$1,234.56', '-$0.05', '+$7.50')
>>> parse_dollars("$10.5")
1050
"""

from __future__ import annotations

import re

from pontoon.errors import InputError

_DOLLARS = re.compile(r"\$?(\d+)(?:\.(\d{1,2}))?")


def parse_dollars(text: str) -> int:
    """Dollars as typed (``10``, ``10.5``, ``$10.50``) in cents; :class:`InputError` else."""
    m = _DOLLARS.fullmatch(text.strip())
    if m is None or len(m.group(1)) > 12:
        raise InputError(f"{text.strip()!r} is not an amount: type dollars, like 10 or 10.50")
    return int(m.group(1)) * 100 + int((m.group(2) or "0").ljust(2, "0"))


def dollars(cents: int) -> str:
    """Cents as dollars: ``$1,234.56``."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{part:02d}"


def signed(cents: int) -> str:
    """Cents as a signed change: ``+$7.50``, ``-$0.05``, ``$0.00``."""
    return ("+" if cents > 0 else "") + dollars(cents)
