"""MkDocs hook: the command-line reference, written at build time from ``pontoon``'s own parser.

``docs/reference/cli.md`` holds the marker ``<!-- pontoon-cli -->``; each build replaces it
with every subcommand's summary and its ``--help`` text as argparse prints it, so the page
cannot drift from the command.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- pontoon-cli -->"
WIDTH = "100"  # the help text's width, fixed so the page does not depend on the terminal


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, summary, parser) of each subcommand of ``parser``, in the order they were added."""
    found = []
    for action in parser._actions:  # argparse keeps no public list of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help or "" for a in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias
                    continue
                seen.add(id(sub))
                found.append((name, summaries.get(name, ""), sub))
    return found


def _walk(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, str, str]]:
    """(command line, summary, help text) of every command under ``parser``, depth first."""
    out = []
    for name, summary, sub in _subcommands(parser):
        line = f"{path} {name}"
        out.append((line, summary, sub.format_help()))
        out.extend(_walk(sub, line))
    return out


def reference() -> str:
    from pontoon.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        commands = _walk(parser, "pontoon")
        top = parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    lines = ["| command | what it does |", "| --- | --- |"]
    for line, summary, _ in commands:
        anchor = line.replace(" ", "-")
        lines.append(f"| [`{line}`](#{anchor}) | {summary} |")
    lines += ["", "## pontoon", "", "```text", top.rstrip(), "```", ""]
    for line, summary, text in commands:
        anchor = line.replace(" ", "-")
        depth = "#" * min(2 + line.count(" ") - 1, 4)
        lines += [f"{depth} `{line}` {{#{anchor}}}", ""]
        if summary:
            lines += [summary[:1].upper() + summary[1:] + ".", ""]
        lines += ["```text", text.rstrip(), "```", ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, reference())
    return markdown
