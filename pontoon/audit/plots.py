"""The table report's plot: each table's running win beside its theoretical win and the band
the win falls in 95 % of the time (a report made with ``series``)."""

from __future__ import annotations

from typing import Any

from pontoon.audit.report import Z95
from pontoon.output import png_bytes, save_figure


def _figure(doc: dict[str, Any]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [t for t in doc["tables"] if t.get("series", {}).get("win")]
    n = max(1, len(rows))
    fig, axes = plt.subplots(n, 1, figsize=(8, 3.2 * n), squeeze=False)
    for ax, t in zip(axes[:, 0], rows, strict=False):
        s = t["series"]
        xs = range(1, len(s["win"]) + 1)
        theo = [x / 100 for x in s["theoretical"]]
        lo = [(m - Z95 * sd) / 100 for m, sd in zip(s["theoretical"], s["sd"], strict=True)]
        hi = [(m + Z95 * sd) / 100 for m, sd in zip(s["theoretical"], s["sd"], strict=True)]
        ax.fill_between(xs, lo, hi, color="#cfe3f5", label="95 % band around the theory")
        ax.plot(xs, theo, "--", color="#1f5f99", label="theoretical win")
        colour = "#b22222" if t["flagged"] else "#2e7d32"
        ax.plot(xs, [w / 100 for w in s["win"]], color=colour, label="actual win")
        flag = "  FLAGGED" if t["flagged"] else ""
        ax.set_title(f"table {t['table']}: win against theory (z = {t['z']}){flag}")
        ax.set_xlabel("rounds")
        ax.set_ylabel("house win, dollars")
        ax.axhline(0, color="grey", lw=0.6)
        ax.legend(loc="upper left", fontsize=8)
    if not rows:
        axes[0, 0].text(0.5, 0.5, "no rounds", ha="center", va="center")
    fig.tight_layout()
    return fig


def write_png(doc: dict[str, Any], path: str) -> None:
    save_figure(_figure(doc), path)


def report_png(doc: dict[str, Any]) -> bytes:
    return png_bytes(_figure(doc))


__all__ = ["report_png", "write_png"]
