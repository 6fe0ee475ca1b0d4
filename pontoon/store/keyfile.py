"""Key files kept outside the database: one key a line, the first in use, every one known.

Both of the store's secrets are kept so (the shoe's seal, :mod:`pontoon.store.secret`, and the
record's signing key, :mod:`pontoon.store.signing`): from ``--…-key-file PATH``, else an
environment variable (keys separated by commas), else a default file under
``$XDG_CONFIG_HOME/pontoon`` (``~/.config/pontoon``), made with one new key the first time.
A file that group or others may read or write is refused; a message never shows a key.

>>> import tempfile, os
>>> spec = KeySpec("test", "TEST_KEY", "test.key", re.compile("[a-z]{4}"), "four letters",
...     lambda: "abcd", "# a test key")
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "k")
>>> _ = open(path, "w").write("# comment\\nwxyz\\nabcd\\n"); os.chmod(path, 0o600)
>>> read_keys(spec, path)
(['wxyz', 'abcd'], '--test-key-file ...')
>>> os.chmod(path, 0o644); read_keys(spec, path)
Traceback (most recent call last):
...
pontoon.errors.InputError: --test-key-file ...: ... is open to group or others (mode 644): ...
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from pontoon.errors import InputError


@dataclass(frozen=True, slots=True)
class KeySpec:
    """What kind of key a file holds: its option's word, environment variable, default file
    name, the form of a key and its description, how to make one, and the new file's header."""

    word: str  # "shoe": --shoe-key-file
    env: str
    filename: str
    form: re.Pattern[str]
    hint: str
    make: Callable[[], str]
    header: str


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/pontoon``, else ``~/.config/pontoon``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pontoon"


def default_path(spec: KeySpec) -> Path:
    return config_dir() / spec.filename


def read_keys(spec: KeySpec, path: str | None, *, create: bool = True) -> tuple[list[str], str]:
    """The keys of ``--WORD-key-file path``, else of the environment, else of the default file
    (made first when missing and ``create``); with where they came from. :class:`InputError`
    for a file open to others, an unreadable or empty one, a malformed key, or — with
    ``create`` False — no key anywhere."""
    if path is not None:
        source = f"--{spec.word}-key-file {path}"
        return _from_file(spec, Path(path), source), source
    if os.environ.get(spec.env):
        source = f"${spec.env}"
        return parse(spec, os.environ[spec.env].split(","), source, "key"), source
    default = default_path(spec)
    if not default.exists():
        if not create:
            raise InputError(
                f"no {spec.word} key: give --{spec.word}-key-file PATH or ${spec.env} "
                f"({default} does not exist)"
            )
        make_file(spec, default)
    return _from_file(spec, default, str(default)), str(default)


def parse(spec: KeySpec, lines: Iterable[str], source: str, unit: str) -> list[str]:
    keys = []
    for n, line in enumerate(lines, 1):
        key = line.strip()
        if not key or (unit == "line" and key.startswith("#")):
            continue
        if not spec.form.fullmatch(key):
            raise InputError(f"{source}: {unit} {n} is not {spec.hint}")
        keys.append(key)
    if not keys:
        raise InputError(f"{source}: no key in it")
    return keys


def _from_file(spec: KeySpec, path: Path, source: str) -> list[str]:
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
    return parse(spec, content.splitlines(), source, "line")


def make_file(spec: KeySpec, path: Path) -> None:
    """A new key file, mode 0600 (its folder 0700 if made here). It is written whole under a
    temporary name (``O_CREAT | O_EXCL``) and linked into place, which fails if another
    process was first: then that process's key is the one, and every process uses it."""
    folder = path.parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    tmp = folder / f".{path.name}.{secrets.token_hex(8)}"
    text = f"{spec.header}\n{spec.make()}\n"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        with suppress(FileExistsError):  # another process made it first: its key is the one
            os.link(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot make the {spec.word} key file {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["KeySpec", "config_dir", "default_path", "make_file", "parse", "read_keys"]
