"""The shoe's seal: the stored shoe state (the cards to come) encrypted and authenticated
with Fernet under keys kept outside the database, so that a copy of the database does not
tell the next cards and a database writer cannot choose them.

The sealed text names the table and the write (``seq``) it was made for: a state sealed for
another table, or for another moment of this one, does not open as this table's shoe. A state
that is not sealed is never dealt (:class:`NotSealedError`); a store written before the seal
was bound is sealed once by ``pontoon rekey``.

The keys come from ``--shoe-key-file PATH``, else ``$PONTOON_SHOE_KEY`` (comma-separated),
else ``$XDG_CONFIG_HOME/pontoon/shoe.key`` (``~/.config/pontoon/shoe.key``), made with a new
random key the first time (:mod:`pontoon.store.keyfile`). The first key seals; every key
opens (rotation).

>>> keys = ShoeKeys([Fernet.generate_key().decode()])
>>> sealed = keys.seal('{"cards":"AS KH 7D"}', "kauri", 12)
>>> sealed.startswith(PREFIX), "AS KH" in sealed
(True, False)
>>> keys.open(sealed, "kauri", 12)
'{"cards":"AS KH 7D"}'
>>> keys.open(sealed, "rimu", 12)
Traceback (most recent call last):
...
pontoon.store.secret.SealError: it was sealed for table 'kauri' at event 12, not for table ...
>>> keys.open('{"cards":"2C"}', "kauri", 12)
Traceback (most recent call last):
...
pontoon.store.secret.NotSealedError: it is not sealed (a clear state is never dealt)
>>> ShoeKeys([Fernet.generate_key().decode()]).open(sealed, "kauri", 12)
Traceback (most recent call last):
...
pontoon.store.secret.WrongKeyError: no key given opens it
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from pontoon.errors import InputError
from pontoon.store.keyfile import KeySpec, read_keys

PREFIX = "fernet:"
ENV = "PONTOON_SHOE_KEY"
SPEC = KeySpec(
    "shoe",
    ENV,
    "shoe.key",
    re.compile(r"[A-Za-z0-9_-]{43}="),  # 32 bytes, url-safe base64
    "a Fernet key (44 characters of url-safe base64, as Fernet.generate_key() makes)",
    lambda: Fernet.generate_key().decode(),
    "# pontoon's shoe key (the first line seals, every line opens): keep it and back it up\n"
    "# apart from the database; without it an unfinished round cannot be resumed",
)


class SealError(InputError):
    """A stored shoe state that is not this table's shoe as the house sealed it."""


class WrongKeyError(SealError):
    """A sealed state that none of the keys opens (or that was changed)."""


class NotSealedError(SealError):
    """A clear (unsealed) state where a sealed one must be."""


class ShoeKeys:
    """The keys of the seal: the first seals, every one opens."""

    def __init__(self, keys: Iterable[str], source: str | None = None) -> None:
        self.source = source  # where the keys came from, for messages
        self._keys = tuple(keys)
        self._fernet = MultiFernet([Fernet(k) for k in self._keys])

    def __reduce__(self) -> tuple[type[ShoeKeys], tuple[tuple[str, ...], str | None]]:
        """Pickled as its keys (a store's writer process gets them over its pipe): Fernet
        objects are Rust objects that do not pickle (cryptography 51)."""
        return ShoeKeys, (self._keys, self.source)

    def seal(self, text: str, table: str, seq: int) -> str:
        """``text`` sealed as the shoe of ``table`` written by its event ``seq``."""
        bound = json.dumps([table, seq], ensure_ascii=False) + "\n" + text
        return PREFIX + self._fernet.encrypt(bound.encode()).decode()

    def open(self, sealed: str, table: str, seq: int) -> str:
        """The plain text of a state sealed as ``table``'s shoe at ``seq``; anything else
        (clear, changed, another key's, another table's or another moment's): a
        :class:`SealError` saying which."""
        bound, text = self.unseal(sealed)
        if bound is None:
            raise SealError("it was sealed before seals named their table: run pontoon rekey")
        if bound != (table, seq):
            raise SealError(
                f"it was sealed for table {bound[0]!r} at event {bound[1]}, "
                f"not for table {table!r} at event {seq}"
            )
        return text

    def unseal(self, sealed: str) -> tuple[tuple[str, int] | None, str]:
        """(the table and seq it was sealed for, or None for a seal made before they were
        named; its plain text)."""
        if not sealed.startswith(PREFIX):
            raise NotSealedError("it is not sealed (a clear state is never dealt)")
        plain = self._undo(self._fernet.decrypt, sealed).decode()
        if plain.startswith("{"):  # sealed before the seal named its table
            return None, plain
        head, _, text = plain.partition("\n")
        table, seq = json.loads(head)
        return (str(table), int(seq)), text

    def _undo(self, how: Callable[[bytes], bytes], sealed: str) -> bytes:
        try:
            return how(sealed.removeprefix(PREFIX).encode())
        except InvalidToken:
            of = "given" if self.source is None else f"of {self.source}"
            raise WrongKeyError(f"no key {of} opens it") from None


def load_keys(path: str | None = None) -> ShoeKeys:
    """The keys of ``--shoe-key-file path``, else of ``$PONTOON_SHOE_KEY``, else of the
    default file (made the first time). :class:`InputError` for a file open to others, an
    unreadable or empty one, or a malformed key (the message never shows a key)."""
    keys, source = read_keys(SPEC, path)
    return ShoeKeys(keys, source)


__all__ = [
    "ENV",
    "PREFIX",
    "NotSealedError",
    "SealError",
    "ShoeKeys",
    "WrongKeyError",
    "load_keys",
]
