"""The suite is hermetic: each test session (each xdist worker) gets its own
``$XDG_CONFIG_HOME`` and ``$XDG_STATE_HOME``, set before any test runs so the servers and
commands the tests start as subprocesses inherit them, and no ``$PONTOON_SHOE_KEY``,
``$PONTOON_RECORD_KEY`` or ``$PONTOON_ANCHORS``: the default key files and anchors are made
there, never in ``~/.config`` or ``~/.local/state``.

The suite's layers are markers (pyproject.toml): ``integration`` on what starts a server, a
process, a browser or PostgreSQL, written at the top of each such module (``pytestmark``) or
on the test; ``browser`` on what drives Chromium, which is integration too whether written or
not. ``make check`` runs the rest."""

from __future__ import annotations

import shutil
import tempfile

import pytest

_patch = pytest.MonkeyPatch()
_home: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    _home.append(tempfile.mkdtemp(prefix="pontoon-config-"))
    _patch.setenv("XDG_CONFIG_HOME", _home[-1])
    _patch.setenv("XDG_STATE_HOME", _home[-1])
    for name in ("PONTOON_SHOE_KEY", "PONTOON_RECORD_KEY", "PONTOON_ANCHORS"):
        _patch.delenv(name, raising=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    _patch.undo()
    for path in _home:
        shutil.rmtree(path, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("integration"):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def patient_trainer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers' trainer gives a step ten minutes, not one: its worker runs under
    SCHED_IDLE in the server's autogroup, so it has only the CPU the rest of the host leaves,
    and the rest of the suite (two workers, their servers and browsers) may leave it none for a
    minute or more — the worker's first step, its imports and a rule set's chart, then waited
    past the minute and was refused as too slow."""
    from dataclasses import replace

    from pontoon.server import train

    monkeypatch.setattr(train, "PACE", replace(train.PACE, step_seconds=600.0))
