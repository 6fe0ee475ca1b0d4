"""The ``pontoon serve`` options, apart from the server (whose imports are heavy): the
command line builds every command's options whichever one runs."""

from __future__ import annotations

import argparse
import socket

from pontoon.argtypes import finite, whole
from pontoon.errors import InputError
from pontoon.store.cli import key_options

from .limits import Limits

DEFAULT_DB = "sqlite:///pontoon.db"
TOKEN_ENV = "PONTOON_SUPERVISOR_TOKEN"
OPERATOR_ENV = "PONTOON_OPERATOR_SECRET"


def url_host(host: str) -> str:
    """``host`` as it goes in an address: an IPv6 address in brackets.

    >>> url_host("::1"), url_host("127.0.0.1")
    ('[::1]', '127.0.0.1')
    """
    return f"[{host}]" if ":" in host else host


def listen(host: str, port: int) -> socket.socket:
    """The public listening socket, bound before anything is served: an address this host
    cannot listen on (in use, not one of its own, no such name) stops the start in one line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    both = host == "::" and socket.has_dualstack_ipv6()  # (as uvicorn binds it: IPv4 too)
    try:
        return socket.create_server((host, port), family=family, backlog=2048, dualstack_ipv6=both)
    except OSError as exc:  # (a name that does not resolve: socket.gaierror, one of them)
        why = (exc.strerror or str(exc)).split(" (while attempting")[0]
        raise InputError(f"serve: cannot listen on {url_host(host)}:{port}: {why}") from None


def store_url(db: str) -> str:
    """``--db`` as a store's URL: a path is an SQLite file.

    >>> store_url("pontoon.db"), store_url("postgresql+psycopg://h/p")
    ('sqlite:///pontoon.db', 'postgresql+psycopg://h/p')
    """
    return db if "://" in db else f"sqlite:///{db}"


# long: one declaration per option of pontoon serve, in the order --help lists them
def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=whole, default=8000, help="port (default 8000)")
    p.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"store (default {DEFAULT_DB})")
    p.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="NAME[=RULES]",
        help="a table and its rule set (repeatable; default: kauri and rimu)",
    )
    p.add_argument("--turn-seconds", type=finite, default=30.0, help="turn timer (16.6)")
    p.add_argument("--deal-seconds", type=finite, default=30.0, help="betting time")
    p.add_argument("--bankroll", type=whole, default=100_000, help="a new player's money (cents)")
    p.add_argument(
        "--session-hours",
        type=finite,
        default=24.0,
        help="close (cash out) a session away for so long with no wager in play (24)",
    )
    p.add_argument(
        "--accounts",
        action="store_true",
        help="people log in (pontoon staff add for the staff), each player's built-in wallet "
        "behind every table; no supervisor's token (default: a name and play money)",
    )
    p.add_argument(
        "--operator-url",
        metavar="URL",
        help="the players' wallets are this operator's (debit, credit, rollback, balance); "
        "its players come in by a launch token (implies --accounts)",
    )
    p.add_argument(
        "--operator-secret-file",
        metavar="PATH",
        help=f"the secret shared with the operator (HS256), its first line (mode 0600); "
        f"else ${OPERATOR_ENV}",
    )
    p.add_argument(
        "--operator-issuer",
        default="operator",
        metavar="NAME",
        help="the issuer the operator's launch tokens name (default operator)",
    )
    p.add_argument(
        "--welcome",
        type=whole,
        default=0,
        metavar="CENTS",
        help="with --accounts: what a newly registered player's wallet is given by the house "
        "(play money, for a demonstration; default 0)",
    )
    p.add_argument(
        "--login-hours",
        type=finite,
        default=24.0,
        help="with --accounts: how long a login lasts (24)",
    )
    p.add_argument(
        "--password-strength",
        choices=("default", "minimum"),
        default="default",
        help="with --accounts: argon2id's profile for new passwords: default (RFC 9106, 64 "
        "MiB) or minimum (OWASP's least, 19 MiB: small machines)",
    )
    p.add_argument(
        "--deflate",
        action="store_true",
        help="compress WebSocket messages (permessage-deflate): less traffic, more CPU",
    )
    p.add_argument(
        "--supervisor-token",
        help=f"the supervisor's token, 16 characters or more (shows in ps: prefer "
        f"--supervisor-token-file or ${TOKEN_ENV}; default random, printed on stderr)",
    )
    p.add_argument(
        "--supervisor-token-file",
        metavar="PATH",
        help="read the supervisor's token from the first line of PATH (mode 0600 or stricter)",
    )
    key_options(p)
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the server answers to (repeatable; default: the loopback names when "
        "--host is a loopback address, else any)",
    )
    p.add_argument(
        "--lease",
        type=finite,
        metavar="SECONDS",
        help="one of several processes on the store: serve the tables this one holds by a "
        "lease of SECONDS (1-60), take over the tables of a process that stops renewing",
    )
    p.add_argument(
        "--processes",
        type=whole,
        default=1,
        metavar="N",
        help="run N processes on this host, one store, the tables spread by lease (default 1)",
    )
    p.add_argument(
        "--writer",
        choices=("process", "thread"),
        default="process",
        help="the store's commits made by a process of its own (default: the tables do not "
        "share the interpreter with them) or by a thread of the server",
    )
    p.add_argument("--handoff-fd", type=whole, help=argparse.SUPPRESS)  # a --processes child's
    p.add_argument("--own-fd", type=whole, help=argparse.SUPPRESS)  # (pontoon.server.processes)
    p.add_argument("--peer-fd", type=whole, help=argparse.SUPPRESS)  # its cluster's secret
    p.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="with --lease: the address the other processes reach this one at (default: "
        "--host:--port)",
    )
    p.add_argument(
        "--cluster-secret-file",
        metavar="PATH",
        help="with --lease, servers started apart (on several hosts): a file (mode 600) "
        "holding the cluster's secret, 64 hex digits, the same for every server; a request "
        "passed on to another carries a proof made with it, and a request bearing a proof "
        "that does not hold is refused",
    )
    p.add_argument(
        "--api-docs",
        action="store_true",
        help="serve the API's /docs and /openapi.json (off by default)",
    )
    p.add_argument(
        "--metrics-port",
        type=whole,
        metavar="PORT",
        help="serve Prometheus metrics at http://--metrics-host:PORT/metrics, apart from the "
        "tables (with --processes N: child i at PORT + i); off by default",
    )
    p.add_argument(
        "--log-json",
        action="store_true",
        help="log JSON lines (time, level, logger, message; the table, round, player and "
        "request each line is about) instead of text",
    )
    p.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address the metrics are served on (127.0.0.1: this host only)",
    )
    for field, kind, metavar, what, _ in LIMIT_OPTIONS:
        default = getattr(Limits, field)
        p.add_argument(
            "--" + field.replace("_", "-"),
            type=kind,
            default=default,
            metavar=metavar,
            help=f"{what} ({default:g})",
        )


# the limits (pontoon.server.limits.Limits) set by options: field, type, metavar, help, highest
LIMIT_OPTIONS: tuple[tuple[str, type, str, str, float], ...] = (
    ("joins_per_address", int, "N", "open sessions made from one address at one table", 1e5),
    ("players_per_table", int, "N", "open sessions at one table", 1e5),
    ("header_seconds", float, "S", "close a connection whose request head takes longer", 3600),
    ("registrations", int, "N", "accounts registered from one address in an hour", 1e5),
)
