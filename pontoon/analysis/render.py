"""The analysis for people: text tables, the chart as text, CSV or a printable PNG grid."""

from __future__ import annotations

import io
from typing import Any

from pontoon.analysis.chart import PAIR_ROWS, RESCUE_ROWS, ROWS, UP_COLUMNS, UP_VALUES, Chart
from pontoon.analysis.report import HandReport, Report
from pontoon.errors import PontoonError
from pontoon.output import save_figure
from pontoon.rules import RuleSet

COLOURS = {
    "H": "#ffffff",
    "S": "#f6d55c",
    "D": "#3caea3",
    "Ds": "#8fd6ce",
    "P": "#5b8def",
    "R": "#ed553b",
    "Rs": "#f4a08f",
    "Rp": "#c77dff",
}
LEGEND = {
    "H": "hit",
    "S": "stand",
    "D": "double, else hit",
    "Ds": "double, else stand",
    "P": "split",
    "R": "surrender, else hit",
    "Rs": "surrender, else stand",
    "Rp": "surrender, else split",
}

RESCUE_COLOUR = "#9b2226"
RESCUE_LEGEND = "R rescue a doubled hand (forfeit the original wager), S stand"


def rules_line(rules: RuleSet) -> str:
    """The knobs that change the strategy most, in one line."""
    parts = [
        rules.name,
        f"{rules.decks} {rules.deck} decks",
        "dealer hits soft 17" if rules.dealer_hits_soft_17 else "dealer stands on soft 17",
        "peek" if rules.dealer_peeks else "no hole card",
        f"double {rules.double_on}" + (", after split" if rules.double_after_split else ""),
        f"split to {rules.split_max_hands}",
        f"surrender {rules.surrender}",
    ]
    if rules.must_draw_below:
        parts.append(f"draw below {rules.must_draw_below}")
    return ", ".join(parts)


def percent(x: float) -> str:
    return f"{x * 100:+.4f} %"


def report_text(rep: Report) -> str:
    out = io.StringIO()
    out.write(f"{rules_line(rep.rules)}\n")
    out.write(f"Strategy: {rep.strategy}; wager {rep.wager} cents\n")
    out.write(
        f"Player's expected return: {percent(rep.ev)} of the wager "
        f"(house edge {rep.ev * -100:.4f} %)\n"
    )
    out.write(f"Method: {rep.method}; {rep.seconds:.2f} s\n\n")
    out.write("By dealer's first card (probability, player's return):\n")
    doc = rep.to_json()
    for name, ev in doc["ev_by_dealer"].items():
        p = doc["dealer_probability"][name]
        out.write(f"  {name}  {p:7.4f}  {percent(ev)}\n")
    out.write(
        "\nTwo-card hands: expected return of each action given the deal"
        + (" and no dealer pontoon" if rep.rules.dealer_peeks else "")
        + "\n"
    )
    out.write(_table(rep.table))
    if rep.chart is not None:
        out.write("\n" + chart_text(rep.chart, rep.rules, rep.ev))
    return out.getvalue()


def _table(rows: list[dict[str, Any]]) -> str:
    names = ("stand", "hit", "double", "surrender", "split")
    lines = ["hand dealer " + " ".join(f"{n:>9}" for n in names) + "  play"]
    for r in rows:
        cells = " ".join(f"{r[n]:+9.4f}" if r[n] is not None else f"{'-':>9}" for n in names)
        lines.append(f"{r['hand']:<4} {r['dealer']:>6} {cells}  {r['play'] or '-'}")
    return "\n".join(lines) + "\n"


def chart_text(chart: Chart, rules: RuleSet, ev: float | None = None) -> str:
    head = f"Basic strategy: {rules_line(rules)}"
    if ev is not None:
        head += f"; expected return {percent(ev)}"
    lines = [head, "hand  " + " ".join(f"{c:>3}" for c in UP_COLUMNS)]
    for row in ROWS:
        lines.append(f"{row:<5} " + " ".join(f"{chart.code(row, v):>3}" for v in UP_VALUES))
    if chart.has_rescues:
        lines.append("After a double (12), by the hand's final total:")
        for row in RESCUE_ROWS:
            lines.append(f"{row:<5} " + " ".join(f"{chart.code(row, v):>3}" for v in UP_VALUES))
    lines.append("  " + "; ".join(f"{k} {v}" for k, v in LEGEND.items()))
    if chart.has_rescues:
        lines.append(f"  X rows: {RESCUE_LEGEND}")
    return "\n".join(lines) + "\n"


def hand_text(rep: HandReport) -> str:
    lines = [f"{rep.hand} against {rep.dealer}: {rep.note}"]
    for name, v in rep.values.items():
        mark = "  <- best" if name == rep.best else ""
        lines.append(f"  {name:<10} {v:+.6f}{mark}")
    return "\n".join(lines) + "\n"


def chart_png(
    chart: Chart,
    rules: RuleSet,
    ev: float | None,
    path: str,
    notes: dict[tuple[str, int], str] | None = None,
    title: str = "Basic strategy",
) -> None:
    """The chart as a coloured grid to print: cells coloured by action, labelled axes, the
    rule set in the title; ``notes``: a second line in some cells (an index: ``S+1``, stand
    from true count +1)."""
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is in the analysis extra
        raise PontoonError(
            "a PNG chart needs matplotlib: pip install 'pontoon[analysis]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    rows = chart.rows()
    rescues = chart.has_rescues
    fig, ax = plt.subplots(figsize=(8.5, 14 if rescues else 11))
    n = len(rows)
    for y, row in enumerate(rows):
        for x, up in enumerate(UP_VALUES):
            code = chart.code(row, up)
            colour = COLOURS[code]
            if row in RESCUE_ROWS:  # 12: rescue (R) or stand (S) after a double
                colour = RESCUE_COLOUR if code == "R" else COLOURS["S"]
            ax.add_patch(Rectangle((x, n - 1 - y), 1, 1, facecolor=colour, edgecolor="#555555"))
            note = (notes or {}).get((row, up))
            ax.text(
                x + 0.5,
                n - 0.5 - y,
                code if note is None else f"{code}\n{note}",
                ha="center",
                va="center",
                fontsize=10 if note is None else 6.5,
                color="white" if colour == RESCUE_COLOUR else "black",
                fontweight="normal" if note is None else "bold",
            )
    ax.set_xlim(0, 10)
    ax.set_ylim(0, n)
    ax.set_xticks([x + 0.5 for x in range(10)], list(UP_COLUMNS))
    ax.set_yticks([n - 0.5 - y for y in range(n)], [_label(r) for r in rows], fontsize=8)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("Dealer's first card", fontsize=11)
    label = "Your hand (H hard total, S soft total, pair"
    label += "; X total after a double)" if rescues else ")"
    ax.set_ylabel(label, fontsize=11)
    extra = len(RESCUE_ROWS) if rescues else 0
    for y in (n - 17, len(PAIR_ROWS) + extra, extra):
        if y > 0:
            ax.axhline(y, color="black", linewidth=2)
    title = f"{title} — {rules.name}\n{_wrap(rules_line(rules))}"
    if ev is not None:
        title += f"\nPlayer's expected return {percent(ev)}"
    fig.suptitle(title, fontsize=10)
    handles = [
        Patch(facecolor=COLOURS[k], edgecolor="#555555", label=f"{k}: {v}")
        for k, v in LEGEND.items()
    ]
    if rescues:
        handles.append(
            Patch(facecolor=RESCUE_COLOUR, edgecolor="#555555", label="X row R: rescue (12)")
        )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.01),
        ncol=4,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0.02, 1, 0.95))
    save_figure(fig, path, dpi=150)


def _label(row: str) -> str:
    if row.startswith("P"):
        v = row[1:]
        return f"{v},{v}"
    return row


def _wrap(text: str, width: int = 90) -> str:
    words, lines, cur = text.split(", "), [], ""
    for w in words:
        if cur and len(cur) + len(w) + 2 > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur}, {w}" if cur else w
    lines.append(cur)
    return ",\n".join(lines)
