"""The strategy drill's API in accounts mode (``pontoon serve --accounts``): only a logged-in
account drills, with the CSRF header like every state-changing request; its decisions are
kept under its own name (never a name it gives); a drill is continued only by the account
that started it; the analysis runs in a process of its own, at low priority, and each
account's drills are bounded (how many at once, how often, one step at a time)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient

from pontoon.server.app import create_app
from pontoon.store.accounts import Accounts, Role, hasher
from pontoon.store.db import Store
from tests.helpers import wait_until
from tests.test_accounts import PASSWORD, login
from tests.test_server_helpers import SUPERVISOR, serving

pytestmark = [
    pytest.mark.integration,  # the server, served in this process
    pytest.mark.usefixtures("patient_trainer"),
]

RULES = "classic-blackjack"
START = {"rules": RULES, "hands": 3, "seed": 1}


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'train.db'}"
    with Store(url) as store:
        people = Accounts(store, hasher("minimum"))
        for name in ("ana", "ben"):
            people.create(name, PASSWORD, Role.PLAYER)
    return url


@pytest.fixture
def client(url: str) -> Iterator[TestClient]:
    app = create_app(url, [], SUPERVISOR, accounts=True, password_strength="minimum")
    with serving(app) as c:
        yield c


def _rows(url: str, learner: str) -> list[dict[str, Any]]:
    with Store(url) as store:
        return store.learner_decisions(learner, "strategy", RULES)


def _play_out(client: TestClient, doc: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """Answer every question of the drill ``doc`` (stand when it may, else the first play)."""
    while doc["question"] is not None:
        legal = doc["question"]["legal"]
        play = "stand" if "stand" in legal else legal[0]
        r = client.post(f"/api/train/{doc['id']}", json={"answer": play}, headers=headers)
        assert r.status_code == 200, r.text
        doc = r.json()
    return doc


def test_an_anonymous_caller_is_not_answered(client: TestClient) -> None:
    """No cookie: 401 for a start and for an answer; the page and its options stay open."""
    r = client.post("/api/train", json=START)
    assert r.status_code == 401, r.text
    r = client.post("/api/train/whatever", json={"answer": "stand"})
    assert r.status_code == 401, r.text
    assert client.get("/train").status_code == 200
    assert RULES in client.get("/api/train/options").json()["rules"]


def test_a_start_or_an_answer_without_the_csrf_header_is_refused(client: TestClient) -> None:
    ana = login(client, "ana")
    cookie_only = {"cookie": ana["cookie"]}
    r = client.post("/api/train", json=START, headers=cookie_only)
    assert r.status_code == 403 and "x-csrf-token" in r.text, r.text
    doc = client.post("/api/train", json=START, headers=ana).json()
    r = client.post(f"/api/train/{doc['id']}", json={"answer": "stand"}, headers=cookie_only)
    assert r.status_code == 403, r.text


def test_decisions_are_kept_under_the_account_never_a_name_it_gives(
    client: TestClient, url: str
) -> None:
    """ana may not write to ben's record (a ``learner`` not her own is refused and nothing is
    kept under it); with no name her drill is kept under her own."""
    ana = login(client, "ana")
    r = client.post("/api/train", json=START | {"learner": "ben"}, headers=ana)
    assert r.status_code == 403 and "your own account" in r.text, r.text
    assert _rows(url, "ben") == []
    doc = client.post("/api/train", json=START, headers=ana).json()
    done = _play_out(client, doc, ana)
    graded = done["summary"]["decisions"]
    assert len(graded) == 3
    assert [r["cell"] for r in _rows(url, "ana")] == [d["cell"] for d in graded]
    assert _rows(url, "ben") == []
    # her own name is hers: accepted
    r = client.post("/api/train", json=START | {"learner": "ana"}, headers=ana)
    assert r.status_code == 200, r.text


def test_only_the_account_that_started_a_drill_continues_it(client: TestClient) -> None:
    ana, ben = login(client, "ana"), login(client, "ben")
    doc = client.post("/api/train", json=START, headers=ana).json()
    play = doc["question"]["legal"][0]
    r = client.post(f"/api/train/{doc['id']}", json={"answer": play}, headers=ben)
    assert r.status_code == 404 and "no such drill" in r.text, r.text
    r = client.post(f"/api/train/{doc['id']}", json={"answer": play}, headers=ana)
    assert r.status_code == 200 and r.json()["grade"]["answer"] == play, r.text


def _policies(pid: int) -> list[int]:
    """The scheduling policy of every thread of process ``pid`` (Linux: ``stat``'s 41st)."""
    tasks = Path(f"/proc/{pid}/task")
    return [int((t / "stat").read_text().rsplit(")", 1)[1].split()[38]) for t in tasks.iterdir()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_the_analysis_runs_in_a_process_of_its_own_at_the_lowest_priority(
    client: TestClient,
) -> None:
    """The worker is another process, in the server's session (so that its tasks wake to
    preempt it at once), every thread of it under SCHED_IDLE; killed, it loses its drills (a
    readable 404, not a 500) and the next drill starts a new one."""
    drills = client.app.state.drills  # type: ignore[attr-defined]
    ana = login(client, "ana")
    doc = client.post("/api/train", json=START, headers=ana).json()
    pid = client.portal.call(drills.worker_pid)  # type: ignore[union-attr]
    assert pid != os.getpid()
    assert set(_policies(pid)) == {os.SCHED_IDLE}, _policies(pid)  # (its BLAS threads too)
    assert _policies(os.getpid())[0] == os.SCHED_OTHER
    # the server's session, hence its autogroup: in a group of its own, the scheduler weighed
    # the worker's group against the server's, and let it run out its slice
    assert os.getsid(pid) == os.getsid(0)
    autogroup = Path(f"/proc/{pid}/autogroup")
    if autogroup.exists():  # (a kernel built with autogroups)
        assert autogroup.read_text() == Path(f"/proc/{os.getpid()}/autogroup").read_text()
    os.kill(pid, signal.SIGKILL)
    play = doc["question"]["legal"][0]
    r = client.post(f"/api/train/{doc['id']}", json={"answer": play}, headers=ana)
    assert r.status_code == 404 and "restarted" in r.text, r.text
    doc = client.post("/api/train", json=START, headers=ana).json()
    assert doc["question"]["legal"]
    assert client.portal.call(drills.worker_pid) not in (pid, os.getpid())  # type: ignore[union-attr]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_the_worker_ends_with_the_server_killed(tmp_path: Path) -> None:
    """A server killed with SIGKILL leaves no worker behind (it watches its parent)."""
    import subprocess
    import sys

    script = (
        "import asyncio, os, signal\n"
        "from pontoon.server.train import Worker, _worker_pid\n"
        "w = Worker()\n"
        "print(asyncio.run(w.call(_worker_pid)), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    with server.stdout:  # (not read to its end: the worker holds it open while it lives)
        pid = int(server.stdout.readline())
    assert server.wait(60) == -signal.SIGKILL
    wait_until(lambda: not Path(f"/proc/{pid}").exists(), 30, f"the worker {pid} gone too")


def test_an_accounts_drills_are_bounded(client: TestClient) -> None:
    """At most ``per_account`` drills (a new one lets the account's oldest go, never
    another's), starts and answers at their rates (429 with Retry-After)."""
    from pontoon.server.train import Pace

    # (rates slow enough that no bucket refills while a loaded host works the steps out)
    pace = Pace(per_account=3, start_burst=5, answer_burst=2, start_rate=1e-3, answer_rate=1e-3)
    client.app.state.drills.pace = pace  # type: ignore[attr-defined]
    ana, ben = login(client, "ana"), login(client, "ben")
    theirs = client.post("/api/train", json=START, headers=ben).json()
    mine = [client.post("/api/train", json=START, headers=ana).json() for _ in range(4)]
    first = mine[0]["question"]["legal"][0]
    r = client.post(f"/api/train/{mine[0]['id']}", json={"answer": first}, headers=ana)
    assert r.status_code == 404, r.text  # let go for the fourth
    for doc in mine[1:3]:
        play = doc["question"]["legal"][0]
        r = client.post(f"/api/train/{doc['id']}", json={"answer": play}, headers=ana)
        assert r.status_code == 200, r.text
    play = mine[3]["question"]["legal"][0]
    r = client.post(f"/api/train/{mine[3]['id']}", json={"answer": play}, headers=ana)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1, r.text
    r = client.post("/api/train", json=START, headers=ana)  # the fifth start: still in the burst
    assert r.status_code == 200, r.text
    r = client.post("/api/train", json=START, headers=ana)
    assert r.status_code == 429 and "too many drills started" in r.text, r.text
    play = theirs["question"]["legal"][0]  # ben's drill was never ana's to let go
    r = client.post(f"/api/train/{theirs['id']}", json={"answer": play}, headers=ben)
    assert r.status_code == 200, r.text


def test_one_step_at_a_time_per_account_and_a_bounded_queue(client: TestClient) -> None:
    """While ana's first drill is being worked out (its rule set's chart: seconds), her next
    is refused (429) and, with room for one step waiting, ben's too (503); then both go."""
    from pontoon.server.train import Pace

    client.app.state.drills.pace = Pace(waiting=1)  # type: ignore[attr-defined]
    ana, ben = login(client, "ana"), login(client, "ben")
    slow = {"rules": "nz-pontoon", "hands": 2, "seed": 1}
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(client.post, "/api/train", json=slow, headers=ana)
        drills = client.app.state.drills  # type: ignore[attr-defined]
        wait_until(lambda: drills.waiting, 30, "ana's first step sent to the worker")
        assert not first.done()
        r = client.post("/api/train", json=START, headers=ana)
        assert r.status_code == 429 and "one step at a time" in r.text, r.text
        r = client.post("/api/train", json=START, headers=ben)
        assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
        assert first.result().status_code == 200, first.result().text
    assert client.post("/api/train", json=START, headers=ben).status_code == 200


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="chromium is not installed")
def test_the_page_in_accounts_mode(url: str, tmp_path: Path) -> None:
    """Logged out, the page says to log in and deals nothing; logged in (the table page's
    login), it hides the name box, names the account and drills with the CSRF header: the
    decision is kept under the account."""
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from tests.test_server_browser import ARGS, CHROMIUM
    from tests.test_server_helpers import in_thread

    app = create_app(url, [], SUPERVISOR, accounts=True, password_strength="minimum")
    with in_thread(app) as host, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_context().new_page()
        page.goto(f"http://{host}/train")
        page.wait_for_selector("#who a[href='/']")
        assert "Log in" in page.inner_text("#who")
        assert page.is_disabled("#start-button")
        login_doc = {"name": "ana", "password": PASSWORD}
        r = page.request.post(f"http://{host}/api/login", data=login_doc)
        assert r.ok, r.text()
        page.goto(f"http://{host}/train")
        page.wait_for_selector("#who:has-text('ana')")
        assert page.is_hidden("#learner")
        page.select_option("#rules", RULES)
        page.fill("#hands", "1")
        page.fill("#seed", "1")
        page.click("#start-button")
        page.wait_for_selector("#actions button", timeout=60_000)
        page.click("#actions button")
        page.wait_for_selector("#summary:not([hidden])", timeout=60_000)
        assert "1 decisions" in page.inner_text("#summary-line")
        browser.close()
    assert len(_rows(url, "ana")) == 1


def _burn(seconds: float) -> float:
    """``seconds`` of this thread's CPU; the monotonic time it began."""
    began = time.monotonic()
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return began


def test_the_worker_keeps_to_its_share_of_a_core() -> None:
    """A step that took t seconds of CPU is followed by a rest of t * (1 / share - 1) before
    the next step begins: at a quarter of a core, 0.2 s of work, then 0.6 s of rest."""
    import asyncio

    from pontoon.server.train import Worker

    async def two(share: float) -> float:
        w = Worker("thread", share=share)
        try:
            await w.call(_burn, 0.2)
            done = time.monotonic()
            began: float = await w.call(_burn, 0.0)
            return began - done
        finally:
            w.close()

    assert asyncio.run(two(0.25)) >= 0.55
    assert asyncio.run(two(1.0)) < 0.1


def test_a_step_that_waits_too_long_is_given_up(client: TestClient) -> None:
    """No request waits on the trainer past ``step_seconds`` (a server stopping waits for its
    requests): a start whose rule set's chart takes longer is answered 503 and let go; the
    next, once the worker is free, is answered."""
    from pontoon.server.train import Pace

    client.app.state.drills.pace = Pace(step_seconds=0.3)  # type: ignore[attr-defined]
    ana = login(client, "ana")
    slow = {"rules": "nz-pontoon", "hands": 2, "seed": 1}  # (a new worker, and the chart)
    r = client.post("/api/train", json=slow, headers=ana)
    assert r.status_code == 503 and "too busy" in r.text and r.headers["retry-after"], r.text
    assert client.app.state.drills.running == {}  # type: ignore[attr-defined]
    client.app.state.drills.pace = Pace()  # type: ignore[attr-defined]
    r = client.post("/api/train", json=slow, headers=ana)
    assert r.status_code == 200, r.text


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started, from /proc."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_a_server_told_to_stop_does_not_wait_out_a_drill_step(url: str, tmp_path: Path) -> None:
    """SIGTERM while an answer waits on the trainer's worker (stopped here, as a long step or
    the rest after one would keep it): the server lets the request go after STOP_SECONDS and
    ends, its worker with it, instead of waiting out the step's minute."""
    import subprocess

    import httpx

    from pontoon.server.serve import STOP_SECONDS
    from tests.test_server_helpers import free_port, start_server

    port = free_port()
    options = ["--db", url, "--accounts", "--password-strength", "minimum", "--table", "kauri"]
    proc = start_server(tmp_path, port, options)
    worker = None
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        ana = login(http, "ana")  # type: ignore[arg-type]
        docs = [http.post("/api/train", json=START, headers=ana).json() for _ in range(2)]
        (worker,) = [p for p in _children(proc.pid) if b"spawn_main" in _cmdline(p)]
        os.kill(worker, signal.SIGSTOP)
        with ThreadPoolExecutor(2) as pool:
            # an answer in each drill: the first to come waits on the worker, and the other
            # is refused at once, ana having a step in the worker already
            answers = [
                pool.submit(
                    http.post,
                    f"/api/train/{doc['id']}",
                    json={"answer": doc["question"]["legal"][0]},
                    headers=ana,
                )
                for doc in docs
            ]
            done, waiting = wait(answers, 30, FIRST_COMPLETED)
            assert len(done) == 1 and len(waiting) == 1, "no answer waits on the worker"
            r = done.pop().result()
            assert r.status_code == 429 and "one step at a time" in r.text, r.text
            began = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_SECONDS + 20)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the server still runs {STOP_SECONDS + 20} s after SIGTERM")
            assert time.monotonic() - began < STOP_SECONDS + 10
            r = waiting.pop().result(30)
            assert r.status_code == 503 and "stopping" in r.text, r.text
        assert not Path(f"/proc/{worker}").exists() or _cmdline(worker) == b""
    finally:
        if worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
        proc.kill()
        proc.wait(30)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""
