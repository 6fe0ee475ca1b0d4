"""The hops between the processes of ``pontoon serve --processes N``: a request passed on from
one child to another carries a peer's proof (:mod:`pontoon.server.peers`), and a child's own
port on the loopback — which any user or process of the host can connect to — answers nothing
without one. The attack: a local process that reads a child's port from the store's leases and
asks it for a table directly (forging ``X-Forwarded-For`` to pass for other addresses, or
opening a WebSocket) is refused, while the public port, and a request passed on between the
children, serve as before."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pontoon.store.db import Store
from pontoon.store.leases import holders
from tests.test_store import fresh_database

pytest.importorskip("fastapi")

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

pytestmark = pytest.mark.integration  # server processes (pontoon serve) on a store

TABLES = ["t1", "t2"]
TOKEN = "hops-test-supervisor-token"


def _until(test: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)  # (the poll's interval)


def _held(url: str) -> dict[str, str]:
    """Each table's holder's address (a child's own port on the loopback)."""
    with Store(url) as store:
        return {t: h.address for t, h in holders(store).items()}


@contextmanager
def _cluster(tmp_path: Path, *more: str) -> Iterator[tuple[str, dict[str, str], int]]:
    """``serve --processes 2`` with one table a child (``more``: more options): the public
    base URL, each table's holder's own address (read from the store as any local user with
    its URL may) and the parent's pid."""
    from pontoon.server.handoff import OWNERS_SECONDS
    from tests.test_server_helpers import free_port, start_server

    port = free_port()
    with fresh_database("sqlite", tmp_path) as url:
        options = ["--db", url, "--processes", "2", "--lease", "3"]
        options += ["--supervisor-token", TOKEN, *more]
        for name in TABLES:
            options += ["--table", name]
        parent = start_server(tmp_path, port, options)
        try:
            _until(lambda: len(set(_held(url).values())) == len(TABLES), 20.0)
            # a clock, not an event: the parent's last read of the holders is older than
            # OWNERS_SECONDS by then, so it reads them again at the next connection
            time.sleep(2 * OWNERS_SECONDS)
            yield f"http://127.0.0.1:{port}", _held(url), parent.pid
        finally:
            parent.terminate()
            parent.wait(30)
            assert parent.stdout is not None
            parent.stdout.close()


def _refused_line(r: httpx.Response) -> str:
    """A refusal's body: one readable line."""
    assert r.status_code in (401, 403), (r.status_code, r.text)
    assert r.text.strip() and "\n" not in r.text.strip(), r.text
    return r.text


def test_a_local_process_asking_a_childs_own_port_directly_is_refused(tmp_path: Path) -> None:
    """The attack, as any local user could make it: each child's port read from the leases,
    asked for its table with no proof — a join under forged ``X-Forwarded-For`` addresses
    (past ``--joins-per-address 1``: on the old code the second from one forged address was
    refused 429 and a third, from another forged address, seated: the throttle dodged), a
    table's state, and a WebSocket with a real player's token. Each is refused in one
    readable line (HTTP 403; the socket closed with 4403 and a reason)."""
    with _cluster(tmp_path, "--joins-per-address", "1") as (base, held, _):
        for table, own in held.items():
            joins = [
                httpx.post(
                    f"http://{own}/api/tables/{table}/join",
                    json={"name": name},
                    headers={"x-forwarded-for": forged},
                )
                for name, forged in (("ma", "10.0.0.1"), ("mb", "10.0.0.1"), ("mc", "10.0.0.2"))
            ]
            assert [j.status_code for j in joins] == [403, 403, 403], [j.text for j in joins]
            assert "peer" in _refused_line(joins[0])
            state = httpx.get(f"http://{own}/api/tables/{table}/state")
            _refused_line(state)
            forged_proof = {"x-pontoon-peer": "v1 1 00 " + "0" * 64}
            _refused_line(httpx.get(f"http://{own}/api/tables/{table}/state", headers=forged_proof))
            # a player's real token, through the public port; then the socket straight to the owner
            joined = httpx.post(f"{base}/api/tables/{table}/join", json={"name": f"p{table}"})
            assert joined.status_code == 200, joined.text
            token = joined.json()["token"]
            with connect(f"ws://{own}/ws/{table}?token={token}") as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    got = ws.recv(timeout=10)
                    pytest.fail(f"the owner's port answered a socket with no proof: {got[:80]}")
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 4403, closed.value.rcvd
                assert "peer" in closed.value.rcvd.reason


def _say(ws: Any, **msg: Any) -> dict[str, Any]:
    ws.send(json.dumps(msg | {"id": f"m{time.monotonic_ns()}"}))
    while (m := json.loads(ws.recv(timeout=10)))["type"] == "state":
        pass
    reply: dict[str, Any] = m
    return reply


def _passed(own: str) -> dict[str, int]:
    """What the child at ``own`` has passed on (its ``/api/stats``)."""
    passed: dict[str, int] = httpx.get(f"http://{own}/api/stats").json()["passed_on"]
    return passed


def _response(sock: socket.socket) -> bytes:
    """One HTTP response read off ``sock`` (a ``Content-Length`` one)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head


def test_the_public_port_and_a_request_passed_on_between_children_still_serve(
    tmp_path: Path,
) -> None:
    """Through the public port each table plays (HTTP and WebSocket, handed to its owner); a
    connection kept alive from one table to the other reaches the first table's owner, which
    passes the second request on to the other child — with its proof — and it is answered:
    an HTTP join, and a WebSocket that plays (the first child's ``passed_on`` counts both)."""
    with _cluster(tmp_path) as (base, held, _):
        a, b = TABLES
        for k, table in enumerate(TABLES):
            joined = httpx.post(f"{base}/api/tables/{table}/join", json={"name": f"p{k}"})
            assert joined.status_code == 200, joined.text
            token = joined.json()["token"]
            with connect(f"ws://{base[7:]}/ws/{table}?token={token}", origin=base) as ws:
                assert json.loads(ws.recv(timeout=10))["table"] == table
                assert _say(ws, type="bet", box=1, amount=500)["type"] == "ok"
        before = _passed(held[a])
        with httpx.Client(base_url=base) as kept:  # one connection: handed to a's owner
            assert kept.get(f"/api/tables/{a}/state").status_code == 200
            passed_on = kept.post(f"/api/tables/{b}/join", json={"name": "q"})
            assert passed_on.status_code == 200, passed_on.text
        http = _passed(held[a]).get("http", 0) - before.get("http", 0)
        assert http >= 1, "the join was not passed on"
        token = passed_on.json()["token"]
        host, port = base[7:].split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(f"GET /api/tables/{a}/state HTTP/1.1\r\nHost: {base[7:]}\r\n\r\n".encode())
            assert b" 200 " in _response(sock).split(b"\r\n")[0]
            with connect(f"ws://{base[7:]}/ws/{b}?token={token}", sock=sock, origin=base) as ws:
                assert json.loads(ws.recv(timeout=10))["table"] == b
                assert _say(ws, type="bet", box=2, amount=500)["type"] == "ok"
        websocket = _passed(held[a]).get("websocket", 0) - before.get("websocket", 0)
        assert websocket == 1, "the socket was not passed on"


def test_no_childs_command_line_or_environment_holds_the_secret(tmp_path: Path) -> None:
    """The cluster's secret is given through a pipe: each child's command line is the
    parent's options and three descriptors' numbers, and its environment the parent's with
    the supervisor's token and its own number (Linux's /proc)."""

    def environment(pid: int) -> set[bytes]:
        return set(Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"))

    with _cluster(tmp_path) as (_, held, parent):
        with Store(f"sqlite:///{tmp_path / 'store.db'}") as store:
            pids = {int(h.owner.split(":")[-2]) for h in holders(store).values()}
        assert len(pids) == len(held)
        for pid in pids:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
            given = argv[argv.index("serve") + 1 :]
            fds = given[-6:]
            assert fds[::2] == ["--handoff-fd", "--own-fd", "--peer-fd"], given
            assert all(n.isdigit() for n in fds[1::2]), given
            assert given[:-6][-2:] == ["--table", TABLES[-1]], given  # the parent's options
            more = environment(pid) - environment(parent)
            known = {b"PONTOON_SUPERVISOR_TOKEN", b"PONTOON_CHILD"}  # (the child's number)
            assert {e.split(b"=")[0] for e in more} <= known, more


def test_a_proof_holds_for_its_request_its_secret_its_window_and_once() -> None:
    """:class:`pontoon.server.peers.Peers`: a proof is refused under another secret, past its
    window (either side), for a request changed in any part it covers (method, path, query,
    body, the client vouched for), malformed, or a second time; two proofs of one request
    are both good (each has its nonce)."""
    from pontoon.server.peers import MISMATCH, WINDOW, Peers

    peers, now = Peers(b"a" * 32), 1_800_000_000.0
    request = ("POST", "/api/tables/t1/join?x=1", b'{"name":"ana"}', "10.0.0.7")
    proof = peers.sign(*request, now=now)
    assert Peers(b"b" * 32).check(proof, *request, now=now) == MISMATCH
    assert peers.check(proof, *request, now=now + WINDOW) is not None  # stale
    assert peers.check(proof, *request, now=now - WINDOW) is not None  # from the future
    changed = [
        ("GET", *request[1:]),
        ("POST", "/api/tables/t2/join?x=1", *request[2:]),
        ("POST", "/api/tables/t1/join?x=2", *request[2:]),
        (*request[:2], b'{"name":"bob"}', request[3]),
        (*request[:3], "10.0.0.8"),
    ]
    for other in changed:
        assert peers.check(proof, *other, now=now) == MISMATCH, other
    version, ms, nonce, mac = proof.split(" ")
    for bad in (f"v2 {ms} {nonce} {mac}", f"{version} {ms} {nonce}", f"v1 -{ms} {nonce} {mac}"):
        assert peers.check(bad, *request, now=now) == "a malformed peer proof"
    later = str(int(ms) + 1000)  # the time moved on: the MAC no longer holds
    assert peers.check(f"v1 {later} {nonce} {mac}", *request, now=now) == MISMATCH
    assert peers.check(proof, *request, now=now + 1) is None  # (none of the above used it)
    assert "replay" in str(peers.check(proof, *request, now=now + 2))
    again = peers.sign(*request, now=now)
    assert again != proof and peers.check(again, *request, now=now + 3) is None
    with pytest.raises(ValueError, match="32 bytes"):
        Peers(b"short")


def test_the_secret_goes_to_a_child_through_a_pipe_read_once() -> None:
    """The parent's end written and closed before the child starts; the child reads the
    secret to the pipe's end and closes it (a short one stops it in one line)."""
    import os

    from pontoon.errors import InputError
    from pontoon.server.processes import read_secret, secret_pipe

    secret = os.urandom(32)
    fd = secret_pipe(secret)
    assert read_secret(fd) == secret
    with pytest.raises(OSError):
        os.fstat(fd)  # closed after reading
    with pytest.raises(InputError, match="31 bytes"):
        read_secret(secret_pipe(secret[:31]))


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    """An application that answers who it believes the client is, and the body it read."""
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": scope["client"][0]})
        await send({"type": "websocket.close", "code": 1000})
        return
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    text = json.dumps({"client": scope["client"][0], "body": body.decode()}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": text})


def test_a_childs_own_port_believes_a_client_address_only_with_a_proof() -> None:
    """:class:`pontoon.server.forward.PeerCheck` on a port of its own: a request signed by
    :class:`PeerAuth` is answered with its body whole and its client the one the proof
    vouches for; with no proof, a proof under another secret, an ``X-Forwarded-For`` or a
    body changed after signing, or a proof used twice, 403 in one line; a WebSocket with no
    proof is closed with 4403, with one accepted and told its vouched-for client. The same
    application on a port that is not its own (the public connections) passes everything
    as it came."""
    from pontoon.server.forward import PeerAuth, PeerCheck
    from pontoon.server.peers import HEADER, Peers
    from tests.test_server_helpers import in_thread

    peers = Peers(b"s" * 32)
    check = PeerCheck(_echo, peers, ("127.0.0.1", 0))
    with in_thread(check) as address:
        host, port = address.split(":")
        check.own = (host, int(port))
        url = f"http://{address}/api/tables/t1/join?x=1"
        signed = httpx.post(
            url, content=b"hello", headers={"x-forwarded-for": "10.0.0.9"}, auth=PeerAuth(peers)
        )
        assert signed.json() == {"client": "10.0.0.9", "body": "hello"}
        assert "peer" in _refused_line(httpx.post(url, headers={"x-forwarded-for": "10.0.0.9"}))
        other = PeerAuth(Peers(b"o" * 32))
        _refused_line(httpx.post(url, content=b"hello", auth=other))
        target = "/api/tables/t1/join?x=1"
        proof = peers.sign("POST", target, b"hello", "10.0.0.9")
        for forwarded, body in (("10.0.0.8", b"hello"), ("10.0.0.9", b"hellO")):
            headers = {HEADER: proof, "x-forwarded-for": forwarded}
            _refused_line(httpx.post(url, content=body, headers=headers))
        headers = {HEADER: proof, "x-forwarded-for": "10.0.0.9"}
        assert httpx.post(url, content=b"hello", headers=headers).status_code == 200
        assert "replay" in _refused_line(httpx.post(url, content=b"hello", headers=headers))
        assert httpx.get(f"http://{address}/api/stats").status_code == 200  # (public anyway)
        with connect(f"ws://{address}/ws/t1?token=x") as ws:
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403
        proof = peers.sign("GET", "/ws/t1?token=x", b"", "10.0.0.5")
        handshake = {HEADER: proof, "x-forwarded-for": "10.0.0.5"}
        with connect(f"ws://{address}/ws/t1?token=x", additional_headers=handshake) as ws:
            assert ws.recv(timeout=10) == "10.0.0.5"
        check.own = (host, int(port) + 1)  # the port is not its own: as it came
        public = httpx.post(url, content=b"hi", headers={"x-forwarded-for": "10.0.0.4"})
        assert public.status_code == 200 and public.json()["body"] == "hi"


def test_the_pits_list_reaches_every_child(tmp_path: Path) -> None:
    """The pit's list through the public port: the child that answers asks the other for its
    tables at its own port — a hop like any other, which must carry a proof — and lists them
    as the other reports them, none unreachable."""
    with _cluster(tmp_path) as (base, _, _):
        for _ in range(2):  # (each child in turn answers a request that names no table)
            listed = httpx.get(f"{base}/api/pit/tables", params={"token": TOKEN}, timeout=10)
            assert listed.status_code == 200, listed.text
            unreachable = [t for t in listed.json() if t.get("unreachable")]
            assert [t["table"] for t in listed.json()] == TABLES and not unreachable, unreachable


def test_a_public_port_checks_a_proof_only_when_one_is_sent() -> None:
    """:class:`pontoon.server.forward.PeerCheck` of a server started apart under ``--lease
    --cluster-secret-file`` (no port of its own): a request bearing no proof passes as it came;
    one bearing a proof is answered only if the proof holds — its client then the one the
    proof vouches for — else 403 in one line (another secret, a changed request, a replay),
    and a WebSocket so refused is closed with 4403."""
    from pontoon.server.forward import PeerAuth, PeerCheck
    from pontoon.server.peers import HEADER, Peers
    from tests.test_server_helpers import in_thread

    peers = Peers(b"s" * 32)
    with in_thread(PeerCheck(_echo, peers, None)) as address:
        url = f"http://{address}/api/tables/t1/join"
        public = httpx.post(url, content=b"hi")
        assert public.status_code == 200 and public.json()["body"] == "hi"
        signed = httpx.post(
            url, content=b"hello", headers={"x-forwarded-for": "10.0.0.9"}, auth=PeerAuth(peers)
        )
        assert signed.json() == {"client": "10.0.0.9", "body": "hello"}
        other = _refused_line(httpx.post(url, content=b"hello", auth=PeerAuth(Peers(b"o" * 32))))
        assert "does not match" in other and "refused" in other
        proof = peers.sign("POST", "/api/tables/t1/join", b"hello", "10.0.0.9")
        headers = {HEADER: proof, "x-forwarded-for": "10.0.0.9"}
        _refused_line(httpx.post(url, content=b"hellO", headers=headers))  # the body changed
        assert httpx.post(url, content=b"hello", headers=headers).status_code == 200
        assert "replay" in _refused_line(httpx.post(url, content=b"hello", headers=headers))
        forged = {HEADER: peers.sign("GET", "/ws/t2?token=x", b"", "10.0.0.5")}  # another's
        with connect(f"ws://{address}/ws/t1?token=x", additional_headers=forged) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403


def _secret_file(tmp_path: Path, text: str, mode: int = 0o600) -> str:
    path = tmp_path / "cluster.secret"
    path.write_text(text + "\n")
    path.chmod(mode)
    return str(path)


@pytest.mark.parametrize(
    ("options", "text", "mode", "said"),
    [
        ([], "ab" * 32, 0o600, "--cluster-secret-file is for servers started apart under --lease"),
        (["--lease", "3", "--processes", "2"], "ab" * 32, 0o600, "--processes makes a secret"),
        (["--lease", "3"], "ab" * 32, 0o644, "readable by others (mode 644): chmod 600 it"),
        (["--lease", "3"], "ab" * 31, 0o600, "does not hold 64 hex digits or more"),
        (["--lease", "3"], "zz" * 32, 0o600, "does not hold 64 hex digits or more"),
    ],
)
def test_an_unfit_cluster_secret_file_is_refused_in_one_line(
    options: list[str],
    text: str,
    mode: int,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Refused before anything starts: the option without ``--lease``, with ``--processes``,
    a file others may read, a secret shorter than 32 bytes or not hex."""
    from pontoon.cli import main

    path = _secret_file(tmp_path, text, mode)
    db = tmp_path / "unused.db"
    argv = ["serve", "--db", f"sqlite:///{db}", "--cluster-secret-file", path, *options]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err, err
    assert not db.exists()


def test_servers_started_apart_sign_their_hops_and_refuse_a_proof_that_does_not_hold(
    tmp_path: Path,
) -> None:
    """Two servers started apart under ``--lease`` with one ``--cluster-secret-file`` (as on
    two hosts): a join and a WebSocket for the table the other holds are passed on with a
    proof the owner checks, and answered. The attack: a request sent straight to the owner
    under a proof made with another secret, a true proof replayed, or a socket under a
    proof made for another request, passing for another client's address — each refused in
    one line (403, or the socket closed with 4403), as is every hop of a server under
    another secret; with no proof at all the owner serves a request as any client's, from
    its own address."""
    from pontoon.server.forward import PeerAuth
    from pontoon.server.peers import HEADER, Peers
    from tests.test_server_helpers import free_port, start_server

    secret = bytes(range(32))
    path = _secret_file(tmp_path, secret.hex())
    procs = []
    with fresh_database("sqlite", tmp_path) as url:
        try:
            bases = []
            for _ in range(2):  # the first to start holds the table
                port = free_port()
                options = ["--db", url, "--table", "kauri", "--lease", "3"]
                options += ["--supervisor-token", TOKEN, "--cluster-secret-file", path]
                procs.append(start_server(tmp_path, port, options))
                bases.append(f"http://127.0.0.1:{port}")
                if len(bases) == 1:
                    _until(lambda: "kauri" in _held(url), 10.0)
            owner, other = bases
            joined = httpx.post(f"{other}/api/tables/kauri/join", json={"name": "ana"})
            assert joined.status_code == 200, joined.text
            assert httpx.get(f"{other}/api/stats").json()["passed_on"].get("http", 0) >= 1
            token = joined.json()["token"]
            with connect(f"ws://{other[7:]}/ws/kauri?token={token}", origin=other) as ws:
                assert json.loads(ws.recv(timeout=10))["table"] == "kauri"
                assert _say(ws, type="bet", box=1, amount=500)["type"] == "ok"
            join = f"{owner}/api/tables/kauri/join"
            body = {"name": "bob"}
            forged = {"x-forwarded-for": "10.0.0.9"}
            other_secret = PeerAuth(Peers(bytes(32)))
            said = _refused_line(httpx.post(join, json=body, headers=forged, auth=other_secret))
            assert "peer proof" in said
            sent = httpx.Request("POST", join, json=body).content
            proof = Peers(secret).sign("POST", "/api/tables/kauri/join", sent, "10.0.0.9")
            true = {HEADER: proof, "x-forwarded-for": "10.0.0.9"}
            first = httpx.post(
                join, content=sent, headers=true | {"content-type": "application/json"}
            )
            assert first.status_code == 200, first.text
            again = httpx.post(
                join, content=sent, headers=true | {"content-type": "application/json"}
            )
            assert "replay" in _refused_line(again)
            mismatched = {HEADER: Peers(secret).sign("GET", "/ws/kauri?token=x", b"", "10.0.0.9")}
            ws_url = f"ws://{owner[7:]}/ws/kauri?token={token}"
            with connect(ws_url, origin=owner, additional_headers=mismatched) as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403
            plain = httpx.post(join, json={"name": "cy"})
            assert plain.status_code == 200, plain.text
            port = free_port()  # a server under another secret: its hops are refused
            options = ["--db", url, "--table", "kauri", "--lease", "3"]
            (tmp_path / "other").mkdir()
            wrong = _secret_file(tmp_path / "other", bytes(32).hex())
            options += ["--supervisor-token", TOKEN, "--cluster-secret-file", wrong]
            procs.append(start_server(tmp_path, port, options))
            refused = httpx.post(f"http://127.0.0.1:{port}/api/tables/kauri/join", json=body)
            assert "does not match" in _refused_line(refused)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(30)
                assert proc.stdout is not None
                proc.stdout.close()
