"""The PAR sheet written out: one list of sections (tables, notes, plots) built from
:meth:`ParSheet.to_json`, rendered as a self-contained HTML page or as a PDF (reportlab,
plots by matplotlib). Both show the same figures, in the same order.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from typing import Any

from pontoon.errors import InputError
from pontoon.output import png_bytes


@dataclass
class Section:
    title: str
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    plot: bytes | None = None  # a PNG


def pct(x: float, digits: int = 4) -> str:
    return f"{x * 100:.{digits}f} %"


def num(x: float | None, digits: int = 6) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def one_in(x: float | None) -> str:
    if x is None:
        return "—"
    return f"1 in {x:,.0f}" if x >= 100 else f"1 in {x:.2f}"


def prob(p: float) -> str:
    """A probability: ten decimals, or six significant digits when it is rare."""
    return f"{p:.10f}" if p >= 1e-4 else f"{p:.6e}"


def signed(x: float) -> str:
    return "0" if x == 0 else f"{x:+g}".replace("-", "−")


def shown(value: object) -> str:
    """A knob's value as a rule file writes it (``true``, ``3:2``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def money(cents: float) -> str:
    sign = "−" if cents < 0 else ""
    return f"{sign}${abs(cents) / 100:,.2f}"


def sections(doc: dict[str, Any]) -> list[Section]:
    """Every section of the report, from its JSON."""
    prec = doc["precision"]
    out = [
        Section(
            "The game",
            ["", ""],
            [
                ["rule set", doc["rules"]["name"]],
                ["strategy", f"{doc['strategy']} ({doc['method']})"],
                ["wager", money(doc["wager"])],
                ["pontoon version", doc["version"]],
                ["created", doc["created"]],
            ],
        ),
        Section(
            "House advantage and volatility",
            ["figure", "value", "precision"],
            [
                ["house edge", pct(doc["house_edge"]), prec["ev"]],
                ["player's expected return", pct(doc["ev"]), prec["ev"]],
                ["variance (per initial wager²)", num(doc["variance"]), prec["variance"]],
                ["standard deviation", num(doc["sd"]), prec["sd"]],
                ["skewness", num(doc["skewness"], 4), prec["skewness"]],
                ["excess kurtosis", num(doc["excess_kurtosis"], 2), prec["skewness"]],
                [
                    "P(win) / P(push) / P(loss)",
                    " / ".join(pct(doc[k], 3) for k in ("p_win", "p_push", "p_loss")),
                    prec["p_win"],
                ],
                ["average wagered per round", num(doc["wagered"], 5), prec["ev"]],
                [
                    "element of risk (edge per unit wagered)",
                    pct(doc["element_of_risk"]),
                    prec["ev"],
                ],
                ["P(the box splits)", pct(doc["split_probability"], 3), prec["ev"]],
                [
                    "P(a split the spread approximates: 3-4 hands)",
                    pct(doc["approximated_probability"], 3),
                    prec["ev"],
                ],
                *[
                    [f"volatility index {k} %", num(v, 4), prec["sd"]]
                    for k, v in doc["volatility_index"].items()
                ],
            ],
            f"{prec['split_error'][0].upper()}{prec['split_error'][1:]} (measured against an "
            "exact calculation; docs/analysts/analysis.md).",
        ),
        Section(
            "Distribution of a round's net (per initial wager)",
            ["net", "probability", "1 in"],
            [
                [signed(r["net"]), prob(r["probability"]), one_in(1 / r["probability"])]
                for r in doc["distribution"]
            ],
            f"Precision: {prec['distribution']}.",
            plot=distribution_plot(doc),
        ),
        Section(
            "Every way a hand ends",
            ["outcome", "wagers", "pays", "per round", "return", "share", "1 in"],
            [
                [
                    r["name"],
                    str(r["stake"]),
                    num(r["payout"], 3),
                    "—" if r["probability"] is None else prob(r["probability"]),
                    f"{r['return']:+.6f}",
                    pct(r["share"], 2),
                    one_in(r["one_in"]),
                ]
                for r in doc["outcomes"]
            ],
            "Per round: expected hands ending so per box-round; return: per round × pays; the "
            "returns add up to the expected return. Share: of the positive returns.",
        ),
        Section(
            "The dealer's hand",
            ["ends", "probability"],
            [[k, pct(v, 4)] for k, v in doc["dealer"].items()],
        ),
    ]
    ins = doc["insurance"]
    if ins:
        out.append(
            Section(
                "Insurance (a separate wager, 10)",
                ["figure", "value"],
                [
                    ["offered (dealer's ace)", pct(ins["offered"], 3)],
                    ["pays / at most", f"{ins['pays']} / {ins['max']} of the wager"],
                    [
                        "wins (dealer's pontoon)",
                        f"{pct(ins['p_win'], 3)} ({one_in(ins['one_in'])})",
                    ],
                    ["expected return per unit insured", pct(ins["ev"], 3)],
                    ["variance per unit insured", num(ins["variance"], 4)],
                ],
                "Exact, at the player's first two cards. In the no-hole-card game the window "
                "lasts until the dealer's second card (docs/rules.md), and the player's drawn "
                "cards change the chance.",
            )
        )
    sb = doc["super_bonus"]
    if sb:
        out.append(
            Section(
                "Super Bonus (11.2) by band",
                ["wager", "pays", "1 in"],
                [
                    [
                        f"{money(b['from'])} – {money(b['to'])}",
                        b["pays"] if isinstance(b["pays"], str) else money(b["pays"]),
                        one_in(sb["one_in"]),
                    ]
                    for b in sb["bands"]
                ],
                f"At this strategy's frequency. Each other box's player receives "
                f"{money(sb['others_each'])}: {sb['others_expected_per_round']:.4f} cents a "
                "round, expected. "
                + (
                    "Its odds must be displayed: it comes less than once in 100 million rounds."
                    if sb["display_odds"]
                    else ""
                ),
            )
        )
    op = doc["operator"]
    out.append(
        Section(
            "The operator's table",
            ["figure", "value"],
            [
                [
                    "rounds an hour × boxes × average wager",
                    f"{op['rounds_per_hour']} × {op['boxes']} × {money(op['wager'])}",
                ],
                ["theoretical win per hour", money(op["theoretical_win_per_hour"])],
                [
                    f"theoretical win per {op['hours']:g}-hour shift",
                    money(op["theoretical_win_per_shift"]),
                ],
                ["a shift's result, 95 % of shifts", " to ".join(money(x) for x in op["band95"])],
                ["a shift's result, 99 % of shifts", " to ".join(money(x) for x in op["band99"])],
                *[
                    [f"variance of a round of {b['boxes']} boxes", num(b["variance"], 4)]
                    for b in doc["boxes"]
                ],
            ],
            "The table's win (the players' loss, 11.2's payments to other boxes included). "
            f"Bands: {prec['shift_band']}; boxes: "
            f"two boxes' covariance {doc['covariance']:.4f}, {prec['covariance']}.",
        )
    )
    if doc["rule_effects"]:
        out.append(
            Section(
                "The effect of each rule (one knob at a time)",
                ["knob", "value", "house edge", "change", "variance"],
                [["(as above)", "", pct(doc["house_edge"]), "", num(doc["variance"])]]
                + [
                    [
                        e["knob"],
                        shown(e["value"]),
                        pct(e["house_edge"]),
                        f"{-e['delta_ev'] * 100:+.4f} pp",
                        num(e["variance"]),
                    ]
                    for e in doc["rule_effects"]
                ],
                f"Each variation analysed afresh ({doc['strategy']}). {prec['rule_effects']}.",
                plot=effects_plot(doc),
            )
        )
    out.append(
        Section(
            "Every knob of the rule set",
            ["knob", "value"],
            [[k, shown(v)] for k, v in doc["rules"].items()],
        )
    )
    return out


def _figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), dpi=120)


def distribution_plot(doc: dict[str, Any]) -> bytes:
    """Bars of P(net) on a log scale (the tails are rare but paid)."""
    fig, ax = _figure(7.5, 3.2)
    nets = [r["net"] for r in doc["distribution"]]
    probs = [r["probability"] for r in doc["distribution"]]
    ax.bar(range(len(nets)), probs, color="#2f6f4f")
    ax.set_xticks(range(len(nets)), [signed(n) for n in nets], rotation=90, fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel("net of a round (initial wagers)")
    ax.set_ylabel("probability")
    ax.set_title(f"{doc['rules']['name']}: a round's net ({doc['precision']['distribution']})")
    return png_bytes(fig)


def effects_plot(doc: dict[str, Any]) -> bytes:
    """Horizontal bars: the change in house edge of each variation."""
    effects = doc["rule_effects"]
    fig, ax = _figure(7.5, 0.28 * len(effects) + 1.2)
    labels = [f"{e['knob']} = {e['value']}" for e in effects]
    change = [-e["delta_ev"] * 100 for e in effects]
    ax.barh(range(len(effects)), change, color=["#a33" if c > 0 else "#2f6f4f" for c in change])
    ax.set_yticks(range(len(effects)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("change in house edge (percentage points)")
    return png_bytes(fig)


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; }
th { background: #f2f2f2; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.85em; } img { max-width: 100%; }
"""


def _numeric(cell: str) -> bool:
    """Whether a cell is a figure (set right-aligned)."""
    return bool(cell) and (cell[0] in "0123456789+−-$—" or cell.startswith("1 in"))


def to_html(doc: dict[str, Any]) -> str:
    """A self-contained page (styles and plots inside)."""
    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(doc['title'])}</title><style>{CSS}</style></head><body>",
        f"<h1>{e(doc['title'])}</h1>",
    ]
    for s in sections(doc):
        parts.append(f"<section><h2>{e(s.title)}</h2>")
        if s.rows:
            parts.append("<table>")
            if any(s.header):
                parts.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in s.header) + "</tr>")
            for row in s.rows:
                cells = "".join(
                    f"<td class='n'>{e(c)}</td>" if j and _numeric(c) else f"<td>{e(c)}</td>"
                    for j, c in enumerate(row)
                )
                parts.append(f"<tr>{cells}</tr>")
            parts.append("</table>")
        if s.plot:
            data = base64.b64encode(s.plot).decode("ascii")
            parts.append(f"<img alt='{e(s.title)}' src='data:image/png;base64,{data}'>")
        if s.note:
            parts.append(f"<p class='note'>{e(s.note)}</p>")
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_pdf(doc: dict[str, Any], path: str) -> None:
    """The same report as a PDF (A4), for the regulator's file."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.lib.units import cm
    from reportlab.platypus import Image, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    small = styles["BodyText"].clone("small", fontSize=7.5, leading=9)
    story: list[Any] = [Paragraph(html.escape(doc["title"]), styles["Title"])]
    for s in sections(doc):
        story.append(Paragraph(html.escape(s.title), styles["Heading2"]))
        if s.rows:
            data = ([s.header] if any(s.header) else []) + s.rows
            cells = [[Paragraph(html.escape(str(c)), small) for c in row] for row in data]
            widths = _widths(data, 17.5 * cm)
            table = Table(cells, colWidths=widths, repeatRows=1 if any(s.header) else 0)
            style: list[Any] = [
                ("GRID", (0, 0), (-1, -1), 0.25, colors.lightgrey),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 1),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
            ]
            if any(s.header):
                style.append(("BACKGROUND", (0, 0), (-1, 0), colors.whitesmoke))
            table.setStyle(TableStyle(style))
            story.append(table)
        if s.plot:
            img = Image(io.BytesIO(s.plot))
            scale = 17.5 * cm / img.drawWidth
            img.drawWidth, img.drawHeight = img.drawWidth * scale, img.drawHeight * scale
            story.append(img)
        if s.note:
            story.append(Paragraph(html.escape(s.note), small))
        story.append(Spacer(1, 0.3 * cm))
    try:
        pdf = SimpleDocTemplate(
            path,
            pagesize=A4,
            title=doc["title"],
            author="pontoon " + doc["version"],
            leftMargin=1.75 * cm,
            rightMargin=1.75 * cm,
            topMargin=1.5 * cm,
            bottomMargin=1.5 * cm,
        )
        pdf.build(story)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def _widths(rows: list[list[str]], total: float) -> list[float]:
    """Column widths in proportion to each column's longest cell (a long text column at most
    half the page)."""
    longest = [min(max(len(str(r[j])) for r in rows), 60) + 2 for j in range(len(rows[0]))]
    scale = total / sum(longest)
    return [n * scale for n in longest]
