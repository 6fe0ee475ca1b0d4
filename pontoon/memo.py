"""A bounded memo keyed by an object's identity, for values made from objects that are hashed
slowly (a frozen rule set hashes every knob) and never change.

>>> memo: Memo[list[int], int] = Memo(2)
>>> a, b, c = [1], [2, 2], [3, 3, 3]
>>> memo.get(a, len), memo.get(b, len), memo.get(a, len), memo.get(c, len)
(1, 2, 1, 3)
>>> len(memo), memo.made  # b, the least recently used, made room for c
(2, 3)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """``make(obj)`` once per object while it is among the ``size`` most recently used. An
    entry holds its object, so that no other object takes its id while the entry lives. (A
    server keeps one rule set per table: the size is well above the tables a process holds.)"""

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self.made = 0
        self._entries: OrderedDict[int, tuple[K, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, obj: K, make: Callable[[K], V]) -> V:
        key = id(obj)
        hit = self._entries.get(key)
        if hit is not None and hit[0] is obj:
            self._entries.move_to_end(key)
            return hit[1]
        value = make(obj)
        self.made += 1
        self._entries[key] = (obj, value)
        self._entries.move_to_end(key)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value
