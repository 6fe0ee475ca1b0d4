"""A griffe extension for the API reference: the docstrings read as Markdown.

The package's docstrings hold doctests (``>>>`` lines and their output) in plain prose, which
Markdown would read as text (and ``[...]`` in an output as a link): each run of lines from a
``>>>`` line to the next blank line is fenced as a ``pycon`` block. Their Sphinx roles
(``:class:`~pontoon.round.Round```, ``:meth:`Round.apply```) become code spans of the name
(the last part of it after a ``~``), as Sphinx shows them.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj|const|py:\w+):`(~?)([^`]+)`")


def plain_roles(text: str) -> str:
    return ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)


def fence_doctests(text: str) -> str:
    out: list[str] = []
    indent: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if indent is None and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
        elif indent is not None and not stripped:
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


class MarkdownDocstrings(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(plain_roles(obj.docstring.value))
