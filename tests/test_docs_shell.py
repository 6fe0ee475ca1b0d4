"""The shell lines of the README and of every guide run as a newcomer runs them: each page's in
order, in one new shell, in a fresh folder that is both the home and the working folder (so a
new store, new keys and a new anchors file), with ``tests/``, ``examples/`` and ``.venv``
linked in as a clone has them. The README's shell starts with a PATH without the virtual
environment — its own ``. .venv/bin/activate`` is what makes ``pontoon`` a command; a guide's
starts where the README's quick start leaves a reader, with ``.venv/bin`` on the PATH. A line
that drifted from the code fails here, not in a reader's hands.

The marking convention, in README.md and in every page of docs/:

- a block fenced ```` ```sh ````: each line is a command (a line ending in ``\\`` goes on to
  the next); it must exit 0;
- a block fenced ```` ```console ````: each line starting with ``$ `` is a command, and the
  lines after it, up to the next ``$ ``, are what it prints: each must appear in one line of
  its output (standard output and error together), where ``…`` stands for anything;
- a block fenced ```` ```shell ```` is shown and not run: it starts a server, asks a person at
  a terminal, or takes minutes (``make test``, ``pontoon serve``, the full PAR sheet). That
  fence is the one marker; the README's last section and CONTRIBUTING.md say so.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # a shell and the commands it starts

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").rglob("*.md"))
BEGIN, END = "@@readme-begin", "@@readme-end"


@dataclass
class Command:
    line: str
    shows: list[str] = field(default_factory=list)


def commands(text: str) -> list[Command]:
    """A page's commands in order (its ``sh`` and ``console`` blocks), with the output each
    is shown to print."""
    out: list[Command] = []
    for fence, body in re.findall(r"^```(sh|console)\n(.*?)^```", text, re.S | re.M):
        body = re.sub(r"\\\n\s*", " ", body)  # continuation lines
        for line in body.splitlines():
            if fence == "sh":
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append(Command(line))
            elif line.startswith("$ "):
                out.append(Command(line[2:]))
            elif line.strip():
                assert out, f"output before any command: {line!r}"
                out[-1].shows.append(line.strip())
    return out


def shown(expected: str, output: str) -> bool:
    """Whether one line of ``output`` holds ``expected``'s pieces (split at ``…``) in order."""
    pieces = [p for p in expected.split("…") if p]
    for line in output.splitlines():
        at = 0
        for piece in pieces:
            at = line.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return True
    return False


def test_the_marking_convention() -> None:
    text = "```sh\na \\\n  b  # note\n# only a comment\n```\n```shell\nserve\n```\n"
    text += "```console\n$ c\nout…put\n\n$ d\n```\n"
    got = commands(text)
    assert [(c.line, c.shows) for c in got] == [
        ("a  b  # note", []),
        ("c", ["out…put"]),
        ("d", []),
    ]
    assert shown("out…put", "x\nout and input\n") and not shown("out…put", "put out\n")


def _pages_with_commands() -> list[Path]:
    return [README] + [p for p in GUIDES if commands(p.read_text("utf-8"))]


def test_the_guides_mark_their_commands() -> None:
    # (a guide that drops its runnable blocks would drop out of the test below unseen)
    names = {p.relative_to(ROOT).as_posix() for p in _pages_with_commands()}
    assert {"docs/analysts/analysis.md", "docs/players/playing.md"} <= names
    assert len(names) >= 12


@pytest.mark.parametrize(
    "page", _pages_with_commands(), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_the_pages_shell_lines_run_in_a_new_shell(page: Path, tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "pontoon").exists():
        pytest.skip("no .venv here: make creates it")
    cmds = commands(page.read_text("utf-8"))
    if page == README:
        assert len(cmds) >= 20  # every capability has its line
    for name in ("tests", "examples", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    script = ["exec 2>&1"]
    for i, c in enumerate(cmds):
        script += [f"echo {BEGIN} {i}", c.line, f"echo {END} {i} $?"]
    path = "/usr/local/bin:/usr/bin:/bin"
    env = {
        "HOME": str(tmp_path),
        "PATH": path if page == README else f"{tmp_path / '.venv' / 'bin'}:{path}",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    outputs: dict[int, tuple[int, str]] = {}
    for m in re.finditer(rf"^{BEGIN} (\d+)\n(.*?)^{END} \1 (\d+)$", done.stdout, re.S | re.M):
        outputs[int(m[1])] = (int(m[3]), m[2])
    problems = []
    for i, c in enumerate(cmds):
        if i not in outputs:
            problems.append(f"{c.line}\n  never finished:\n{done.stdout[-2000:]}")
            break
        status, output = outputs[i]
        if status != 0:
            problems.append(f"{c.line}\n  exit {status}:\n{output[-2000:]}")
        for line in c.shows:
            if not shown(line, output):
                said = f"does not print {line!r}; it printed"
                problems.append(f"{c.line}\n  {said}:\n{output[-2000:]}")
    assert not problems, "\n\n".join(problems)
