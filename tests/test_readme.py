"""The README's Python examples run as a new user would run them, one after another in one
session (the second uses the first's ``rules``): an example that drifted from the API fails
here, not in a reader's hands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _examples() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)


def test_the_readmes_python_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("gymnasium")
    examples = _examples()
    assert len(examples) >= 3  # the library, the irregularities, the environment
    session: dict[str, object] = {"__name__": "readme"}
    for code in examples:
        exec(compile(code, str(README), "exec"), session)
    printed = capsys.readouterr().out.split()
    assert len(printed) == 3 and sum(int(n) for n in printed) == 0  # ana, ben, the house
