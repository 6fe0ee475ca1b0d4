"""``pontoon serve --processes N``: N server processes on one host and one store.

The parent binds the public address once, starts N children and hands each new connection to
the child holding the lease of the table its request names (:mod:`pontoon.server.handoff`:
the socket itself, so a player's socket ends at its table's owner). Each child also listens on
a port of its own on the loopback (bound by the parent, the same for a child started again),
which it advertises in its leases: a request that reaches a child for a table another child
holds is passed on there (:mod:`pontoon.server.forward`). The tables are spread by lease
(:mod:`pontoon.server.tenure`); a child that dies is started again, and meanwhile its tables
are taken by the others as their leases lapse.

Any user of the host can connect to a child's own port: a request passed on there carries a
peer's proof (:mod:`pontoon.server.peers`) under a secret the parent makes at start and gives
each child through a pipe it inherits (:func:`secret_pipe`, :func:`read_secret`) — never on a
command line, in the environment, a file, a log or the store.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from pontoon.errors import InputError

from .options import TOKEN_ENV, listen, store_url, url_host

if TYPE_CHECKING:
    from .peers import Peers

HANDOFF_FD = "--handoff-fd"  # a child's: the Unix socket its connections come over
OWN_FD = "--own-fd"  # a child's: its listening socket on the loopback
PEER_FD = "--peer-fd"  # a child's: the pipe it reads the cluster's secret from
CHILD_ENV = "PONTOON_CHILD"  # a child's number, 0 to N - 1 (its metrics' port: --metrics-port + it)


def child_command(handoff: int, own: int, peer: int) -> list[str]:
    """A child's command: this one's, with its two sockets and its secret's pipe (the
    descriptors' numbers)."""
    argv = sys.argv[1:]
    if "serve" not in argv:
        raise InputError("serve: --processes runs from the command line (pontoon serve ...)")
    fds = [HANDOFF_FD, str(handoff), OWN_FD, str(own), PEER_FD, str(peer)]
    return [sys.executable, "-m", "pontoon.cli", *argv, *fds]


def secret_pipe(secret: bytes) -> int:
    """A pipe's reading end that gives ``secret`` and then its end (for a child to inherit).

    >>> read_secret(secret_pipe(b"s" * 32)) == b"s" * 32
    True
    """
    reading, writing = os.pipe()
    try:
        os.write(writing, secret)  # (a pipe holds 64 KiB before a reader comes)
    finally:
        os.close(writing)
    return reading


def read_secret(fd: int) -> bytes:
    """The cluster's secret, read to its end from the pipe ``fd`` (closed after).

    >>> read_secret(secret_pipe(b"short"))
    Traceback (most recent call last):
    pontoon.errors.InputError: serve: the cluster's secret came with 5 bytes, not 32 or more
    """
    from .peers import SECRET_BYTES

    try:
        with os.fdopen(fd, "rb") as pipe:
            secret = pipe.read()
    except OSError as exc:
        raise InputError(f"serve: the cluster's secret could not be read: {exc}") from None
    if len(secret) < SECRET_BYTES:
        n = len(secret)
        raise InputError(f"serve: the cluster's secret came with {n} bytes, not 32 or more")
    return secret


def run(args: argparse.Namespace, token: str, show_token: bool = False) -> int:
    """Start and watch the children until SIGTERM or SIGINT; then stop them (each lets go
    of its leases). ``show_token``: the supervisor's token was made here (printed on stderr,
    as one process prints it)."""
    from pontoon.store.db import Store
    from pontoon.store.leases import holders

    from .handoff import Router

    n = args.processes
    listener = listen(args.host, args.port)
    owns = [socket.create_server(("127.0.0.1", 0)) for _ in range(n)]  # each child's own
    index = {f"127.0.0.1:{own.getsockname()[1]}": i for i, own in enumerate(owns)}
    store = Store(store_url(args.db))  # the tables' holders, read as connections come
    env = dict(os.environ, **{TOKEN_ENV: token})  # one supervisor token for every child
    secret = secrets.token_bytes(32)  # the children's proof of a request passed on
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    address = f"{url_host(args.host)}:{args.port}"
    print(f"Pontoon table server: http://{address}/ ({n} processes)", flush=True)
    if show_token:
        print(f"supervisor token: {token}", file=sys.stderr, flush=True)

    def start(i: int) -> tuple[subprocess.Popen[Any], socket.socket]:
        """Child ``i`` and the parent's end of the Unix socket its connections go over."""
        mine, theirs = socket.socketpair()
        mine.setblocking(False)  # a child slow to read: its connections wait in the parent
        peer = secret_pipe(secret)
        fds = (theirs.fileno(), owns[i].fileno(), peer)
        try:
            child = subprocess.Popen(
                child_command(*fds),
                pass_fds=fds,
                env=env | {CHILD_ENV: str(i)},
                stdout=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
            os.close(peer)
        return child, mine

    def owners() -> dict[str, int]:
        found = holders(store)
        return {t: index[h.address] for t, h in found.items() if h.address in index}

    started = [start(i) for i in range(n)]
    children = [child for child, _ in started]
    ends = [end for _, end in started]  # (the router reads them as they are replaced)
    router = Router(listener, ends, owners)
    router.start()
    try:
        while not stopping:
            time.sleep(0.2)
            for i, child in enumerate(children):
                if child.poll() is not None and not stopping:
                    print(
                        f"process {child.pid} stopped ({child.returncode}): started again",
                        file=sys.stderr,
                        flush=True,
                    )
                    old = ends[i]
                    children[i], ends[i] = start(i)
                    old.close()
    finally:
        router.stop()
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
        listener.close()
        store.close()
    return 0


def leased_child(
    args: argparse.Namespace,
) -> tuple[list[socket.socket], socket.socket, Any, Peers]:
    """A child's listening socket on the loopback, the socket its connections are handed over
    (:class:`pontoon.server.handoff.HandedServer`), its leasing and the cluster's secret (to
    sign a request passed on and check one that comes to its own port). On Linux the child is
    told to stop (SIGTERM) when its parent dies, however it dies."""
    from .peers import Peers
    from .tenure import Leasing

    if getattr(args, "peer_fd", None) is None:
        raise InputError(f"serve: {HANDOFF_FD} goes with {PEER_FD} (its parent gives both)")
    peers = Peers(read_secret(int(args.peer_fd)))

    if sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)

    handoff = socket.socket(fileno=int(args.handoff_fd))
    own = socket.socket(fileno=int(args.own_fd))
    address = f"127.0.0.1:{own.getsockname()[1]}"
    return [own], handoff, Leasing(address, args.lease or 3.0, processes=args.processes), peers
