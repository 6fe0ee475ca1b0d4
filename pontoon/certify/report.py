"""The certification's document (JSON), its table for the terminal, and a self-contained
HTML report (inline CSS, plots as base64 PNG)."""

from __future__ import annotations

import base64
import html
from typing import Any

import numpy as np

from pontoon.output import png_bytes

from .run import Run
from .tally import BINS, Tally
from .tests import Result, verdict

EXIT_FAILED = 3  # as `pontoon verify`: the check ran and found a fault


def document(run: Run, results: list[Result]) -> dict[str, Any]:
    rules, tally = run.rules, run.tally
    if run.seed is None:
        generator = "secrets.SystemRandom (os.urandom), as the tables shuffle"
    else:
        generator = "numpy.random.default_rng (PCG64), one key a chunk from SeedSequence(seed)"
    return {
        "command": "certify",
        "rules": rules.name,
        "deck": rules.deck,
        "decks": rules.decks,
        "cards": tally.pack.n,
        "penetration": rules.penetration,
        "burn_card": rules.burn_card,
        "shuffles": tally.shuffles,
        "seed": "secure" if run.seed is None else run.seed,
        "generator": generator,
        "workers": run.workers,
        "seconds": round(run.seconds, 3),
        "shuffles_per_second": round(tally.shuffles / run.seconds, 1) if run.seconds else None,
        "tests": [r.to_dict() for r in results],
        **verdict(results),
    }


def _num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else f"{x:,}"


def summary(doc: dict[str, Any]) -> list[str]:
    """The lines above and below the table, shared by text and HTML."""
    burn = "a burn card" if doc["burn_card"] else "no burn card"
    head = [
        f"Shuffle certification, {doc['rules']}: {doc['decks']} {doc['deck']} decks, "
        f"{doc['cards']} cards, cutting card at {doc['penetration']:g}, {burn}",
        f"{doc['shuffles']:,} shuffles, generator {doc['generator']}; seed {doc['seed']}; "
        f"{doc['seconds']:.1f} s on {doc['workers']} process(es)",
    ]
    k, fwer = doc["statistical_tests"], doc["family_false_failure"]
    foot = [
        f"Each test passes at {doc['level']:.0%} (p >= {1 - doc['level']:.2f}). With {k} tests a "
        f"fair shuffle fails at least one with probability about {fwer:.1%} (1 - 0.99^{k}): "
        "a single failure just below 0.01 calls for a second run on fresh shuffles, not a verdict.",
        "PASSED: every test passed and the cutting card check held."
        if doc["passed"]
        else f"FAILED: {', '.join(t['name'] for t in doc['tests'] if not t['passed'])}.",
    ]
    return [*head, "", *foot]


def text(doc: dict[str, Any]) -> str:
    lines = summary(doc)
    head, foot = lines[:2], lines[3:]
    rows = [
        f"{'test':<20} {'statistic':>11} {'df':>6} {'p-value':>8}  result  what it tests",
    ]
    for t in doc["tests"]:
        stat = t["statistic"] if t["p_value"] is not None else int(t["statistic"])
        rows.append(
            f"{t['name']:<20} {_num(stat, 3):>11} {_num(t['df']):>6} {_num(t['p_value']):>8}  "
            f"{'pass' if t['passed'] else 'FAIL':<6}  {t['tests']}"
        )
    details = [f"  {t['name']}: {t['detail']}" for t in doc["tests"]]
    return "\n".join([*head, "", *rows, "", *details, "", *foot]) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #1b6b3a; font-weight: bold; } .fail { color: #b00020; font-weight: bold; }
.verdict { font-size: 1.3em; }
"""


def html_report(doc: dict[str, Any], tally: Tally) -> str:
    esc = html.escape
    lines = summary(doc)
    rows = []
    for t in doc["tests"]:
        stat = t["statistic"] if t["p_value"] is not None else int(t["statistic"])
        word, cls = ("pass", "pass") if t["passed"] else ("FAIL", "fail")
        rows.append(
            f"<tr><td>{esc(t['name'])}</td><td>{esc(t['tests'])}</td>"
            f"<td class=num>{_num(stat, 3)}</td><td class=num>{_num(t['df'])}</td>"
            f"<td class=num>{_num(t['p_value'])}</td><td class={cls}>{word}</td>"
            f"<td>{esc(t['detail'])}</td></tr>"
        )
    cls = "pass" if doc["passed"] else "fail"
    figures = "".join(
        f'<h2>{esc(title)}</h2><p>{esc(caption)}</p><img alt="{esc(title)}" '
        f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
        for title, caption, png in _figures(tally)
    )
    title = f"Shuffle certification: {esc(doc['rules'])}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{_CSS}</style></head><body>
<h1>Shuffle certification</h1>
<p>{esc(lines[0])}<br>{esc(lines[1])}</p>
<p class="verdict {cls}">{esc(lines[-1])}</p>
<table><tr><th>test</th><th>what it tests</th><th>statistic</th><th>df</th><th>p-value</th>
<th>result</th><th>detail</th></tr>
{"".join(rows)}
</table>
<p>{esc(lines[-2])} The overall verdict passes only when every test passes at 99 %.
A z statistic (no df) is two-sided normal; the others are chi-square with df degrees of
freedom.</p>
{figures}
</body></html>
"""


def _figures(tally: Tally) -> list[tuple[str, str, bytes]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    obs = tally.position_rank
    expected = obs.sum(axis=1, keepdims=True) * obs.sum(axis=0) / obs.sum()
    resid = (obs - expected) / np.sqrt(expected)
    fig, ax = plt.subplots(figsize=(10, 3.2), dpi=110)
    im = ax.imshow(resid.T, aspect="auto", cmap="RdBu_r", vmin=-4, vmax=4, interpolation="none")
    ax.set_yticks(range(tally.pack.ranks), list(tally.pack.rank_names))
    ax.set_xlabel("position in the shoe (0: the burnt card, then the cards in dealing order)")
    ax.set_ylabel("rank")
    fig.colorbar(im, ax=ax, label="(observed - expected) / sqrt(expected)")
    out.append(
        (
            "Position by rank",
            "Standardised residuals of the position-rank table: a fair shuffle leaves noise "
            "(about 1 in 100 cells beyond ±2.6), a biased one stripes or blocks.",
            png_bytes(fig),
        )
    )
    cov = tally.carried_cov.diagonal().reshape(BINS, BINS)
    z = tally.carried / np.sqrt(np.where(cov > 0, cov, 1))
    fig, ax = plt.subplots(figsize=(4.6, 3.8), dpi=110)
    im = ax.imshow(z, cmap="RdBu_r", vmin=-4, vmax=4)
    ax.set_xlabel("eighth of shoe i+1")
    ax.set_ylabel("eighth of shoe i")
    fig.colorbar(im, ax=ax, label="z")
    out.append(
        (
            "Consecutive shoes",
            "z of each card's copies carried from an eighth of one shoe to an eighth of the "
            "next: a shuffle that forgets where cards lay shows noise.",
            png_bytes(fig),
        )
    )
    return out
