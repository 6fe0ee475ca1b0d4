"""``pontoon serve``: the table server on 127.0.0.1:8000 with the SQLite store ./pontoon.db."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from pontoon.errors import InputError
from pontoon.rules import RuleSet, load_rules, parse_set_options

from .limits import Limits, head_timeout
from .options import LIMIT_OPTIONS, OPERATOR_ENV, TOKEN_ENV, listen, store_url, url_host
from .table_config import TableConfig

if TYPE_CHECKING:
    import socket

    from .peers import Peers
    from .tenure import Leasing

# Told to stop (SIGTERM, Ctrl-C), the server lets the requests under way finish for this long
# at most, then cancels them: a strategy drill's step waiting on the trainer's worker, a cold
# chart, would otherwise hold its exit for up to a minute (a table's own requests take
# milliseconds; a round cut short resumes from the store).
STOP_SECONDS: Final = 10


def table_configs(args: argparse.Namespace) -> list[TableConfig]:
    overrides = parse_set_options(args.set)
    specs: list[tuple[str, RuleSet]] = []
    for spec in args.table:
        name, _, source = spec.partition("=")
        if not name or len(name) > 32 or not name.replace("-", "").isalnum():
            raise InputError(f"serve: bad table name {name!r}")
        specs.append((name, load_rules(source or args.rules, overrides)))
    if not specs:
        base = load_rules(args.rules, overrides)
        high = base.replace(table_min=base.table_min * 5, table_max=base.table_max * 5)
        specs = [("kauri", base), ("rimu", high)]
    if len({n for n, _ in specs}) != len(specs):
        raise InputError("serve: two tables with one name")
    hours = getattr(args, "session_hours", 24.0)
    return [
        TableConfig(n, r, args.turn_seconds, args.deal_seconds, args.bankroll, None, hours * 3600.0)
        for n, r in specs
    ]


def _check_numbers(args: argparse.Namespace) -> None:
    if not 0 <= args.port <= 65535:
        raise InputError(f"serve: --port must be 0 to 65535, not {args.port}")
    for option in ("turn_seconds", "deal_seconds"):
        value = getattr(args, option)
        if not 0 < value <= 3600:
            flag = "--" + option.replace("_", "-")
            raise InputError(f"serve: {flag} must be more than 0 and at most 3600, not {value}")
    hours = getattr(args, "session_hours", 24.0)
    if not 0 < hours <= 24 * 365:
        msg = f"serve: --session-hours must be more than 0 and at most 8760, not {hours}"
        raise InputError(msg)
    if args.bankroll < 0:
        raise InputError(f"serve: --bankroll must be 0 or more cents, not {args.bankroll}")
    for field, kind, _, _, most in LIMIT_OPTIONS:
        value = getattr(args, field, getattr(Limits, field))
        if not 0 < value <= most:
            flag = "--" + field.replace("_", "-")
            span = f"1 to {most:g}" if kind is int else f"more than 0 and at most {most:g}"
            raise InputError(f"serve: {flag} must be {span}, not {value}")


def limits(args: argparse.Namespace) -> Limits:
    """The limits the options set (the rest as :class:`Limits` has them)."""
    given = {f: getattr(args, f, getattr(Limits, f)) for f, *_ in LIMIT_OPTIONS}
    return Limits(**given)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(args: argparse.Namespace, advertised: str | None = None) -> list[str] | None:
    """The names the server answers to (the ``Host`` of a request: DNS rebinding): the
    ``--allowed-host`` names, else the loopback names when it listens on loopback only, else
    None (any: name them with ``--allowed-host``). ``advertised``: the address one of several
    processes gives the others (its lease's), whose host it answers to as well: a request
    passed on to it arrives by that name."""
    given = list(getattr(args, "allowed_host", None) or [])
    if given:
        own = urlsplit("//" + advertised).hostname if advertised else None
        return given + ([own] if own and own not in given else [])
    return list(LOOPBACK) if args.host in LOOPBACK else None


MIN_TOKEN = 16


def secret_file(path: str, option: str) -> str:
    """The first line of the file ``option`` names; :class:`InputError` when it cannot be
    read or others than its owner may read it."""
    try:
        mode = os.stat(path).st_mode
        with open(path, encoding="utf-8") as f:
            text = f.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"serve: {option}: cannot read {path}: {exc}") from None
    if mode & 0o077:
        bits = f"{mode & 0o777:o}"
        raise InputError(
            f"serve: {option}: {path} is readable by others (mode {bits}): chmod 600 it"
        )
    return text


def _cluster_peers(args: argparse.Namespace, leasing: Leasing | None) -> Peers | None:
    """``--cluster-secret-file``: the cluster's secret of servers started apart under
    ``--lease`` (:mod:`pontoon.server.peers`); None without it. :class:`InputError` for a file
    open to others, a secret shorter than 32 bytes (64 hex digits) or not hex, or the option
    without ``--lease`` or with ``--processes`` (whose parent makes a secret of its own)."""
    path = getattr(args, "cluster_secret_file", None)
    if path is None:
        return None
    if leasing is None or getattr(args, "processes", 1) > 1:
        raise InputError(
            "serve: --cluster-secret-file is for servers started apart under --lease "
            "(--processes makes a secret of its own)"
        )
    from .peers import SECRET_BYTES, Peers

    text = secret_file(path, "--cluster-secret-file").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < SECRET_BYTES:
        raise InputError(
            f"serve: --cluster-secret-file: {path} does not hold {2 * SECRET_BYTES} hex digits "
            f"or more (make one: openssl rand -hex {SECRET_BYTES} > {path}; chmod 600 {path})"
        )
    return Peers(secret)


def _check_keys(args: argparse.Namespace, configs: list[TableConfig], keys: dict[str, Any]) -> None:
    """The options checked, the store opened: a table whose head is not signed or whose
    stored shoe ``keys`` do not open stops the start here, in one line, not at the first
    table's opening."""
    from pontoon.store.db import Store
    from pontoon.store.trust import check_tables

    with Store(store_url(args.db), **keys) as store:
        check_tables(store, [c.name for c in configs])


def supervisor_token(args: argparse.Namespace) -> tuple[str, bool]:
    """The supervisor's token and whether it was given: ``--supervisor-token``, else the first
    line of ``--supervisor-token-file`` (readable by its owner only), else
    ``$PONTOON_SUPERVISOR_TOKEN`` (if not empty), else a random one. A given token must be 16
    printable ASCII characters or more with no whitespace: :class:`InputError` (exit 2)."""
    flag = getattr(args, "supervisor_token", None)
    path = getattr(args, "supervisor_token_file", None)
    if flag is not None and path is not None:
        raise InputError("serve: give --supervisor-token or --supervisor-token-file, not both")
    if flag is not None:
        token, source = flag, "--supervisor-token"
    elif path is not None:
        source = "--supervisor-token-file"
        token = secret_file(path, source)
    elif os.environ.get(TOKEN_ENV):
        token, source = os.environ[TOKEN_ENV], f"${TOKEN_ENV}"
    else:
        return secrets.token_urlsafe(24), False
    if len(token) < MIN_TOKEN or not (token.isascii() and token.isprintable()) or " " in token:
        msg = (
            f"serve: the supervisor's token ({source}) must be {MIN_TOKEN} printable ASCII "
            f"characters or more with no whitespace (e.g. python -c 'import secrets; "
            f"print(secrets.token_urlsafe(24))')"
        )
        raise InputError(msg)
    return token, True


def operator_config(args: argparse.Namespace) -> Any:
    """The operator's wallet the options name, or None. Its secret: the first line of
    ``--operator-secret-file`` (readable by its owner only), else ``$PONTOON_OPERATOR_SECRET``;
    32 characters or more."""
    url = getattr(args, "operator_url", None)
    if url is None:
        return None
    if not url.startswith(("http://", "https://")):
        raise InputError(f"serve: --operator-url must be an http(s) URL, not {url!r}")
    path = getattr(args, "operator_secret_file", None)
    if path is not None:
        secret = secret_file(path, "--operator-secret-file")
    else:
        secret = os.environ.get(OPERATOR_ENV, "")
    if len(secret) < 32:
        raise InputError(
            f"serve: the operator's secret (--operator-secret-file or ${OPERATOR_ENV}) must be "
            "32 characters or more"
        )
    from .operator import OperatorConfig

    return OperatorConfig(url, secret, getattr(args, "operator_issuer", "operator"))


def _welcome(args: argparse.Namespace) -> int:
    cents = int(getattr(args, "welcome", 0))
    if not 0 <= cents <= 10**12:
        raise InputError(f"serve: --welcome must be 0 to 10**12 cents, not {cents}")
    return cents


def _leasing(args: argparse.Namespace) -> Leasing | None:
    """``--lease``: this process is one of several on the store (None: it serves every table)."""
    seconds = getattr(args, "lease", None)
    if seconds is None:
        if getattr(args, "advertise", None):
            raise InputError("serve: --advertise goes with --lease")
        return None
    if not 1 <= seconds <= 60:
        raise InputError(f"serve: --lease must be 1 to 60 seconds, not {seconds:g}")
    from .tenure import Leasing

    own = f"{url_host(args.host)}:{args.port}"
    return Leasing(getattr(args, "advertise", None) or own, seconds)


def serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401 (the server extra is there: checked before anything starts)

        from .app import create_app
    except ImportError as exc:  # pragma: no cover - the extra is missing
        msg = f"serve needs the server extra: pip install 'pontoon[server]' ({exc})"
        raise InputError(msg) from None
    from pontoon.store.cli import store_keys
    from pontoon.store.secret import load_keys
    from pontoon.store.signing import load_record_keys

    _check_numbers(args)
    token, given = supervisor_token(args)
    processes = getattr(args, "processes", 1)
    if not 1 <= processes <= 64:
        raise InputError(f"serve: --processes must be 1 to 64, not {processes}")
    child = getattr(args, "handoff_fd", None) is not None
    configs = table_configs(args)
    keys = store_keys(args)  # a bad key: exit 2 before listening
    for kind, load in (("shoe_keys", load_keys), ("record_keys", load_record_keys)):
        if keys[kind] is None:  # (the environment's or the default file's, checked now)
            keys[kind] = load()
    operator = operator_config(args)
    accounts = bool(getattr(args, "accounts", False)) or operator is not None
    limit = limits(args)
    welcome = _welcome(args)
    login_hours = getattr(args, "login_hours", 24.0)
    if not 0 < login_hours <= 24 * 365:
        raise InputError(
            f"serve: --login-hours must be more than 0 and at most 8760, not {login_hours}"
        )
    if processes > 1 and not child:  # the parent: it starts and watches the processes
        from .processes import run

        _cluster_peers(args, _leasing(args))  # its options checked before anything starts
        _check_keys(args, configs, keys)
        return run(args, token, show_token=not (accounts or given))
    docs = bool(getattr(args, "api_docs", False))
    sockets, handoff, peers = None, None, None
    if child:
        from .processes import leased_child

        sockets, handoff, leasing, peers = leased_child(args)
    else:
        leasing = _leasing(args)
        peers = _cluster_peers(args, leasing)
    hosts = allowed_hosts(args, leasing.address if leasing else None)
    if not child:  # (its parent checked; it holds the public address)
        _check_keys(args, configs, keys)
        sockets = [listen(args.host, args.port)]
    app: Any = create_app(
        store_url(args.db),
        configs,
        token,
        docs,
        hosts,
        limit,
        **keys,
        accounts=accounts,
        password_strength=getattr(args, "password_strength", "default"),
        login_hours=login_hours,
        operator=operator,
        welcome=welcome,
        leasing=leasing,
        writer_process=args.writer == "process",
    )
    inner = app  # (its state: the metrics read the hub there)
    if getattr(args, "log_json", False):
        from .logs import RequestIds, use_json

        use_json()
        app = RequestIds(app)
    if peers is not None:  # a child's own port answers its peers only; a proof is checked
        from .forward import PeerCheck

        assert sockets is not None  # (leased_child's: its own)
        host, own = sockets[0].getsockname()[:2]
        app = PeerCheck(app, peers, (host, own) if child else None)
    port = sockets[0].getsockname()[1] if sockets and not child else args.port  # (--port 0)
    print(f"Pontoon table server: http://{url_host(args.host)}:{port}/", flush=True)
    if leasing is not None:
        print(f"one of several on the store: {leasing.address}, lease {leasing.seconds:g} s")
    print(f"tables: {', '.join(c.name for c in configs)} · store: {store_url(args.db)}", flush=True)
    if accounts:
        print("accounts: log in at the page; staff with pontoon staff add", flush=True)
    elif not given:
        print(f"supervisor token: {token}", file=sys.stderr, flush=True)
    metrics = _metrics(inner, args, child)
    try:
        return _run(app, args, limit, sockets, handoff)
    finally:
        if metrics is not None:
            metrics.shutdown()


def _metrics(app: Any, args: argparse.Namespace, child: bool) -> Any:
    """With ``--metrics-port``: the metrics of ``app`` served apart from the tables
    (:mod:`pontoon.server.metrics`); the server, or None."""
    port = getattr(args, "metrics_port", None)
    if port is None:
        return None
    from .metrics import serve_metrics
    from .processes import CHILD_ENV

    if child:
        port += int(os.environ.get(CHILD_ENV, "0"))
    host = getattr(args, "metrics_host", "127.0.0.1")
    try:
        server = serve_metrics(app.state, host, port)
    except OSError as exc:
        raise InputError(f"serve: cannot serve the metrics at {host}:{port}: {exc}") from None
    print(f"metrics: http://{url_host(host)}:{port}/metrics", flush=True)
    return server


def _run(
    app: Any,
    args: argparse.Namespace,
    limit: Limits,
    sockets: list[socket.socket] | None,
    handoff: socket.socket | None,
) -> int:
    """Serve ``app`` with uvicorn on ``sockets`` (a child of ``--processes``: also the
    connections its parent hands it over ``handoff``) until it stops."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    config: Any = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        http=head_timeout(AutoHTTPProtocol, limit.header_seconds),
        log_level="warning",
        ws_max_size=65536,
        ws_per_message_deflate=bool(getattr(args, "deflate", False)),
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    # A thread that lets go of the GIL for each statement and its commit (the store's writer
    # under --writer thread, the logins' and sessions' threads) needs it back at once: with the
    # default 5 ms switch interval a busy event loop would make every group commit on a thread
    # wait several times (1 ms: twice the actions/s, a third the latency).
    sys.setswitchinterval(0.001)
    if handoff is not None:  # a child of --processes: its connections come from the parent
        from .handoff import HandedServer

        HandedServer(config, handoff).run(sockets=sockets)
        return 0
    uvicorn.Server(config).run(sockets=sockets)
    return 0
