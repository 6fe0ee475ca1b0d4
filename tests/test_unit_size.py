"""No unit of the server or the store too long to hold in one's head: a function or method
of more than :data:`MOST` lines in ``pontoon/server`` or ``pontoon/store`` says why, with a
comment ``# long: <why>`` on the line before its ``def`` (its decorators') or on its first
body line. Read from the source, so a function that grows past it fails here, named."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "pontoon"
PACKAGES = ("server", "store")
MOST = 100  # lines, from the def (or its first decorator) to its last line
MARK = "# long:"


def sources() -> list[Path]:
    """The modules of the server and the store (the store's migrations are not units)."""
    out = []
    for name in PACKAGES:
        out += [p for p in sorted((PACKAGE / name).rglob("*.py")) if "migrations" not in p.parts]
    return out


def comments(text: str) -> dict[int, str]:
    """The comment on each line of ``text`` that has one, by line number."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string
    return found


def too_long(path: Path) -> list[str]:
    """The functions of ``path`` longer than :data:`MOST` lines that do not say why."""
    text = path.read_text("utf-8")
    said = comments(text)
    out = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        assert node.end_lineno is not None
        length = node.end_lineno - start + 1
        if length <= MOST:
            continue
        why = [said.get(start - 1, ""), said.get(node.body[0].lineno, "")]
        if not any(c.startswith(MARK) and c[len(MARK) :].strip() for c in why):
            where = "/".join(path.parts[-2:])
            out.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    return out


def test_no_function_of_the_server_or_the_store_is_long_without_a_reason() -> None:
    paths = sources()
    assert any(p.name == "db.py" for p in paths)  # the packages are read at all
    assert [hit for p in paths for hit in too_long(p)] == []


def test_a_long_function_is_found_and_its_reason_is_read(tmp_path: Path) -> None:
    body = "".join(f"    x = {i}\n" for i in range(MOST))
    bare = tmp_path / "bare.py"
    bare.write_text(f"def f() -> None:\n{body}")
    said = tmp_path / "said.py"
    said.write_text(f"# long: one table of values, read top to bottom\ndef f() -> None:\n{body}")
    empty = tmp_path / "empty.py"
    empty.write_text(f"# long:\ndef f() -> None:\n{body}")
    short = tmp_path / "short.py"
    short.write_text("def f() -> None:\n    x = 1\n")
    assert [h.split(" ")[1] for h in too_long(bare)] == ["f:"]
    assert too_long(said) == []
    assert len(too_long(empty)) == 1  # a reason must be given
    assert too_long(short) == []
