"""The record's signing key: Ed25519, kept outside the database, so that the record's heads
are signed by the house and checked by anyone with the public key alone.

A database writer without the private key can neither forge a signature nor make one for a
chain it recomputed; an auditor given the public keys can check every signature and forge
none (Ed25519 from ``cryptography``: 64-byte signatures, 36 µs to sign one here). The keys
come as the shoe's do (:mod:`pontoon.store.keyfile`): ``--record-key-file PATH``, else
``$PONTOON_RECORD_KEY`` (comma-separated), else ``~/.config/pontoon/record.key``, made the first
time; a key is the 32-byte private seed in url-safe base64 (44 characters). The first key
signs; the public keys of all of them check (rotation). A public key file holds one public key
a line, the same base64 form, as ``pontoon public-key`` prints them.

>>> keys = RecordKeys([generate()])
>>> key, sig = keys.sign(b'{"heads":{}}')
>>> keys.public().check(key, b'{"heads":{}}', sig), keys.public().check(key, b'{}', sig)
(True, False)
>>> PublicKeys([]).check(key, b'{"heads":{}}', sig)
False
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from pontoon.errors import InputError
from pontoon.store.keyfile import KeySpec, parse, read_keys

ENV = "PONTOON_RECORD_KEY"
_FORM = re.compile(r"[A-Za-z0-9_-]{43}=")  # 32 bytes, url-safe base64


def generate() -> str:
    """A new private key, as a key file holds it."""
    seed = Ed25519PrivateKey.generate().private_bytes_raw()
    return base64.urlsafe_b64encode(seed).decode()


SPEC = KeySpec(
    "record",
    ENV,
    "record.key",
    _FORM,
    "an Ed25519 private key (44 characters of url-safe base64: its 32-byte seed)",
    generate,
    "# pontoon's record key (the first line signs; the public keys of every line check):\n"
    "# keep it apart from the database; give its public keys (pontoon public-key) to auditors",
)


def _raw(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.encode())


def key_id(public: bytes) -> str:
    """A public key's name in the record: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public).hexdigest()[:16]


class PublicKeys:
    """The public keys that check the record's signatures, by :func:`key_id`."""

    def __init__(self, keys: Iterable[bytes], source: str | None = None) -> None:
        self.source = source
        self._keys = {key_id(k): Ed25519PublicKey.from_public_bytes(k) for k in keys}

    def __contains__(self, kid: str) -> bool:
        return kid in self._keys

    def check(self, kid: str, body: bytes, signature: str) -> bool:
        """Whether ``signature`` (base64) is one of key ``kid`` over ``body``."""
        key = self._keys.get(kid)
        if key is None:
            return False
        try:
            key.verify(base64.b64decode(signature), body)
        except (InvalidSignature, ValueError):
            return False
        return True

    def __or__(self, other: PublicKeys) -> PublicKeys:
        both = PublicKeys([], self.source)
        both._keys = self._keys | other._keys
        return both

    def lines(self) -> list[str]:
        """The keys as a public key file holds them."""
        raw = (k.public_bytes(Encoding.Raw, PublicFormat.Raw) for k in self._keys.values())
        return [base64.urlsafe_b64encode(r).decode() for r in raw]


class RecordKeys:
    """The private keys: the first signs, every one's public key checks."""

    def __init__(self, keys: Iterable[str], source: str | None = None) -> None:
        self.source = source
        self._keys = tuple(keys)
        self._private = [Ed25519PrivateKey.from_private_bytes(_raw(k)) for k in self._keys]
        raw = [k.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) for k in self._private]
        self._public = PublicKeys(raw, source)
        self.signer = key_id(raw[0])

    def __reduce__(self) -> tuple[type[RecordKeys], tuple[tuple[str, ...], str | None]]:
        """Pickled as its keys (a writer process gets them over its pipe, never argv)."""
        return RecordKeys, (self._keys, self.source)

    def sign(self, body: bytes) -> tuple[str, str]:
        """(the signing key's id, the signature in base64) of ``body``."""
        return self.signer, base64.b64encode(self._private[0].sign(body)).decode()

    def public(self) -> PublicKeys:
        return self._public


def load_record_keys(path: str | None = None) -> RecordKeys:
    """The keys of ``--record-key-file path``, else ``$PONTOON_RECORD_KEY``, else the default
    file (made the first time)."""
    keys, source = read_keys(SPEC, path)
    return RecordKeys(keys, source)


def load_public_keys(path: str | None = None) -> PublicKeys:
    """The public keys of the file ``path`` (one a line, ``#`` comments), else those of the
    record keys of ``$PONTOON_RECORD_KEY`` or the default file — never made here: with no key
    anywhere, :class:`InputError`."""
    if path is None:
        try:
            keys, source = read_keys(SPEC, None, create=False)
        except InputError as exc:
            raise InputError(
                f"no public key to check the record's signatures with: give --public-key PATH "
                f"(pontoon public-key prints them where the record key is) ({exc})"
            ) from None
        return RecordKeys(keys, source).public()
    source = f"--public-key {path}"
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not text"
        raise InputError(f"{source}: cannot read it: {reason}") from None
    hint = "an Ed25519 public key (44 characters of url-safe base64)"
    spec = KeySpec("public", "", "", _FORM, hint, generate, "")
    return PublicKeys([_raw(k) for k in parse(spec, lines, source, "line")], source)


__all__ = [
    "ENV",
    "PublicKeys",
    "RecordKeys",
    "generate",
    "key_id",
    "load_public_keys",
    "load_record_keys",
]
