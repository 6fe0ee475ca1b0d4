"""``pontoon serve --processes N``: N server processes on one host and one store.

The parent binds the public address once and starts N children that share its listening
socket (the kernel hands each new connection to one of them). Each child also listens on a
port of its own on the loopback, which it advertises in its leases: a request that reaches a
child for a table another child holds is passed on there (:mod:`pontoon.server.forward`). The
tables are spread by lease (:mod:`pontoon.server.tenure`); a child that dies is started again,
and meanwhile its tables are taken by the others as its leases lapse.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from pontoon.errors import InputError

from .options import TOKEN_ENV, url_host

LISTEN_FD = "--listen-fd"  # a child's: the parent's listening socket


def child_command(fd: int) -> list[str]:
    """A child's command: this one's, on the parent's socket."""
    argv = sys.argv[1:]
    if "serve" not in argv:
        raise InputError("serve: --processes runs from the command line (pontoon serve ...)")
    return [sys.executable, "-m", "pontoon.cli", *argv, LISTEN_FD, str(fd)]


def run(args: argparse.Namespace, token: str) -> int:
    """Start and watch the children until SIGTERM or SIGINT; then stop them (each lets go
    of its leases)."""
    n = args.processes
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listener = socket.create_server((args.host, args.port), family=family, backlog=2048)
    fd = listener.fileno()
    os.set_inheritable(fd, True)
    env = dict(os.environ, **{TOKEN_ENV: token})  # one supervisor token for every child
    command = child_command(fd)
    children: list[subprocess.Popen[Any]] = []
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    address = f"{url_host(args.host)}:{args.port}"
    print(f"Pontoon table server: http://{address}/ ({n} processes)", flush=True)

    def start() -> subprocess.Popen[Any]:
        return subprocess.Popen(command, pass_fds=(fd,), env=env, stdout=subprocess.DEVNULL)

    children = [start() for _ in range(n)]
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
                    children[i] = start()
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
        listener.close()
    return 0


def leased_child(args: argparse.Namespace) -> tuple[list[socket.socket], Any]:
    """A child's sockets (the parent's, its own on the loopback) and its leasing. On Linux the
    child is told to stop (SIGTERM) when its parent dies, however it dies."""
    from .tenure import Leasing

    if sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)

    public = socket.socket(fileno=int(args.listen_fd))
    own = socket.create_server(("127.0.0.1", 0))
    address = f"127.0.0.1:{own.getsockname()[1]}"
    return [public, own], Leasing(address, args.lease or 3.0, processes=args.processes)
