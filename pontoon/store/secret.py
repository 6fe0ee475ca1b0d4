"""The shoe's seal: the stored shoe state (the cards to come) encrypted and authenticated
with Fernet under keys kept outside the database, so that a copy of the database does not
tell the next cards.

The keys come from ``--shoe-key-file PATH``, else ``$PONTOON_SHOE_KEY`` (comma-separated),
else ``$XDG_CONFIG_HOME/pontoon/shoe.key`` (``~/.config/pontoon/shoe.key``), made with a new
random key the first time. The first key seals; every key opens (rotation).

>>> keys = ShoeKeys([Fernet.generate_key().decode()])
>>> sealed = keys.seal('{"cards":"AS KH 7D"}')
>>> sealed.startswith(PREFIX), "AS KH" in sealed
(True, False)
>>> keys.open(sealed)
'{"cards":"AS KH 7D"}'
>>> keys.open('{"cards":"2C"}')  # a state stored before the seal: as it is
'{"cards":"2C"}'
>>> ShoeKeys([Fernet.generate_key().decode()]).open(sealed)
Traceback (most recent call last):
...
pontoon.store.secret.WrongKeyError: no key given opens it
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from pontoon.errors import InputError

PREFIX = "fernet:"
ENV = "PONTOON_SHOE_KEY"
_KEY = re.compile(r"[A-Za-z0-9_-]{43}=")  # 32 bytes, url-safe base64
_HINT = "a Fernet key (44 characters of url-safe base64, as Fernet.generate_key() makes)"


class WrongKeyError(InputError):
    """A sealed state that none of the keys opens."""


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

    def seal(self, text: str) -> str:
        return PREFIX + self._fernet.encrypt(text.encode()).decode()

    def open(self, sealed: str) -> str:
        """The plain text of a sealed state; a plain (legacy) state as it is."""
        if not sealed.startswith(PREFIX):
            return sealed
        return self._undo(self._fernet.decrypt, sealed).decode()

    def rotate(self, sealed: str) -> str:
        """``sealed`` sealed again under the first key (a plain state: sealed)."""
        if not sealed.startswith(PREFIX):
            return self.seal(sealed)
        return PREFIX + self._undo(self._fernet.rotate, sealed).decode()

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
    if path is not None:
        return _from_file(Path(path), f"--shoe-key-file {path}")
    if os.environ.get(ENV):
        return ShoeKeys(_parse(os.environ[ENV].split(","), f"${ENV}", "key"), f"${ENV}")
    default = default_path()
    if not default.exists():
        _create(default)
    return _from_file(default, str(default))


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pontoon" / "shoe.key"


def _parse(lines: Iterable[str], source: str, unit: str) -> list[str]:
    keys = []
    for n, line in enumerate(lines, 1):
        key = line.strip()
        if not key or (unit == "line" and key.startswith("#")):
            continue
        if not _KEY.fullmatch(key):
            raise InputError(f"{source}: {unit} {n} is not {_HINT}")
        keys.append(key)
    if not keys:
        raise InputError(f"{source}: no key in it")
    return keys


def _from_file(path: Path, source: str) -> ShoeKeys:
    try:
        fd = os.open(path, os.O_RDONLY)
        with os.fdopen(fd, encoding="utf-8") as f:
            mode = os.fstat(f.fileno()).st_mode
            content = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not text"
        raise InputError(f"{source}: cannot read {path}: {reason}") from None
    if mode & 0o077:
        bits = f"{mode & 0o777:o}"
        msg = f"{source}: {path} is open to group or others (mode {bits}): chmod 600 it"
        raise InputError(msg)
    return ShoeKeys(_parse(content.splitlines(), source, "line"), source)


def _create(path: Path) -> None:
    """A new key file, mode 0600 (its folder 0700 if made here). It is written whole under a
    temporary name (``O_CREAT | O_EXCL``) and linked into place, which fails if another
    process was first: then that process's key is the one, and every process uses it."""
    folder = path.parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    tmp = folder / f".{path.name}.{secrets.token_hex(8)}"
    text = (
        "# pontoon's shoe key (the first line seals, every line opens): keep it and back it up\n"
        "# apart from the database; without it an unfinished round cannot be resumed\n"
        f"{Fernet.generate_key().decode()}\n"
    )
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        with suppress(FileExistsError):  # another process made it first: its key is the one
            os.link(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot make the shoe key file {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["ENV", "PREFIX", "ShoeKeys", "WrongKeyError", "default_path", "load_keys"]
