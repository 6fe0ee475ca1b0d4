"""Proof that a request comes from a peer: another process of ``pontoon serve --processes N``.

The parent makes a cluster secret at start (:func:`secrets.token_bytes`, 32 bytes) and gives
it to each child; a child passing a request on to another signs it, and the other believes it
only with a valid proof. The proof, in the header :data:`HEADER`, is ``v1 MS NONCE MAC``: the
time it was made (Unix milliseconds), 16 random hex digits, and the HMAC-SHA256 under the
secret of the request's method, its target (path and query, as sent), that time and nonce,
the SHA-256 of its body (a WebSocket's handshake has none) and the client's address it vouches
for (``X-Forwarded-For``). It is good for :data:`WINDOW` seconds either side of the
checker's clock (the processes share one host's), and once: a proof seen within its window
again is a replay, refused.

>>> peers, now = Peers(b"k" * 32), 1_700_000_000.0
>>> proof = peers.sign("POST", "/api/tables/t1/join", b'{"name":"ana"}', "10.0.0.7", now)
>>> peers.check(proof, "POST", "/api/tables/t1/join", b'{"name":"ana"}', "10.0.0.7", now + 1)
>>> peers.check(proof, "POST", "/api/tables/t1/join", b'{"name":"ana"}', "10.0.0.7", now + 2)
'a peer proof already used (a replay)'
>>> other = Peers(b"x" * 32)  # another secret
>>> other.check(proof, "POST", "/api/tables/t1/join", b'{"name":"ana"}', "10.0.0.7", now + 1)
'a peer proof that does not match the request (another secret, or the request changed)'
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import secrets
import time
from string import hexdigits

HEADER = "x-pontoon-peer"
WINDOW = 30.0  # seconds a proof is good for, either side of the checker's clock
SECRET_BYTES = 32
VERSION = "v1"
MISMATCH = "a peer proof that does not match the request (another secret, or the request changed)"


def _message(method: str, target: str, ms: int, nonce: str, body: bytes, client: str) -> bytes:
    """What the MAC is made over: one field a line (none of them holds a line break)."""
    fields = [VERSION, method.upper(), target, str(ms), nonce, hashlib.sha256(body).hexdigest()]
    return "\n".join([*fields, client]).encode("utf-8", "surrogateescape")


class Peers:
    """The cluster's secret, to sign a request passed on (:meth:`sign`) and to check one that
    arrives (:meth:`check`), with the proofs already seen within their window."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < SECRET_BYTES:
            raise ValueError(f"a cluster secret is {SECRET_BYTES} bytes or more")
        self._secret = secret
        self._seen: set[str] = set()
        self._expiring: list[tuple[float, str]] = []  # (when a proof goes stale, its nonce)

    def _mac(self, method: str, target: str, ms: int, nonce: str, body: bytes, client: str) -> str:
        message = _message(method, target, ms, nonce, body, client)
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def sign(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        client: str = "",
        now: float | None = None,
    ) -> str:
        """The proof of a request to ``target`` (its path and query, as sent) from ``client``
        (the address put in ``X-Forwarded-For``, or ``""``)."""
        ms = int((time.time() if now is None else now) * 1000)
        nonce = secrets.token_hex(8)
        return f"{VERSION} {ms} {nonce} {self._mac(method, target, ms, nonce, body, client)}"

    def check(
        self,
        proof: str | None,
        method: str,
        target: str,
        body: bytes = b"",
        client: str = "",
        now: float | None = None,
    ) -> str | None:
        """None when ``proof`` is a peer's for this request and not seen before (it is
        remembered until it goes stale); else why not, in one line.

        >>> peers = Peers(b"k" * 32)
        >>> proof = peers.sign("GET", "/ws/t1?token=a", now=100.0)
        >>> peers.check(proof, "GET", "/ws/t1?token=b", now=100.0)
        'a peer proof that does not match the request (another secret, or the request changed)'
        >>> peers.check(proof, "GET", "/ws/t1?token=a", now=131.0)
        'a stale peer proof (made 30 s or more from now)'
        >>> peers.check(None, "GET", "/"), peers.check("v1 x", "GET", "/")
        ('no peer proof', 'a malformed peer proof')
        """
        if proof is None:
            return "no peer proof"
        parts = proof.split(" ")
        if len(parts) != 4 or parts[0] != VERSION or not parts[1].isdigit():
            return "a malformed peer proof"
        _, made, nonce, mac = parts
        if len(nonce) != 16 or not set(nonce) <= set(hexdigits):
            return "a malformed peer proof"
        now = time.time() if now is None else now
        ms = int(made)
        if abs(now - ms / 1000) >= WINDOW:
            return f"a stale peer proof (made {WINDOW:g} s or more from now)"
        expected = self._mac(method, target, ms, nonce, body, client)
        if not hmac.compare_digest(expected.encode(), mac.encode("utf-8", "surrogateescape")):
            return MISMATCH
        while self._expiring and self._expiring[0][0] < now:
            self._seen.discard(heapq.heappop(self._expiring)[1])
        if nonce in self._seen:
            return "a peer proof already used (a replay)"
        self._seen.add(nonce)
        heapq.heappush(self._expiring, (ms / 1000 + WINDOW, nonce))
        return None
