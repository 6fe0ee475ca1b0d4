"""The suite is hermetic: each test session (each xdist worker) gets its own
``$XDG_CONFIG_HOME``, set before any test runs so the servers and commands the tests start as
subprocesses inherit it, and no ``$PONTOON_SHOE_KEY``: the default shoe key file is made there,
never in ``~/.config``."""

from __future__ import annotations

import shutil
import tempfile

import pytest

_patch = pytest.MonkeyPatch()
_home: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    _home.append(tempfile.mkdtemp(prefix="pontoon-config-"))
    _patch.setenv("XDG_CONFIG_HOME", _home[-1])
    _patch.delenv("PONTOON_SHOE_KEY", raising=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    _patch.undo()
    for path in _home:
        shutil.rmtree(path, ignore_errors=True)
