"""A simulation's results as the ``simulate --json`` document, as text, and as a plot.

Expected value is per box and round, in units of the base wager (``--wager``), player's view;
its standard error is computed from each round's total over all boxes (boxes of one round are
not independent), so ``stderr = sd(round total) / sqrt(rounds) / boxes``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pontoon.sim import kernel as K
from pontoon.sim.compiled import CATEGORY_NAMES
from pontoon.sim.runner import Run, iter_bins

TIMING_KEYS = ("rounds_per_second", "seconds", "workers", "scheduler", "kernel")
EVENT_NAMES = {
    K.K_DEALER_PONTOON: "dealer_pontoon",
    K.K_SURRENDER: "surrender",
    K.K_SPLIT: "split",
    K.K_DOUBLE: "double",
    K.K_BUST: "bust",
    K.K_SHUFFLE: "shuffle",
    K.K_SHUFFLE_16_7: "shuffle_16_7",
    K.K_RESCUE: "rescue",
}


def _mean_se(n: float, s: float, sq: float) -> tuple[float, float]:
    if n < 1:
        return 0.0, 0.0
    mean = s / n
    var = (sq - s * s / n) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(max(var, 0.0) / n)


def document(run: Run, strategy: str) -> dict[str, Any]:
    """The ``simulate --json`` document."""
    job = run.job
    res = run.result
    acc = res.acc
    w = job.wager
    boxes = job.boxes
    played = acc[K.A_PLAYED]
    box_rounds = played * boxes
    total_units = acc[K.A_NET] / w
    mean_round, se_round = _mean_se(played, total_units, acc[K.A_SQ])
    ev, se = mean_round / boxes, se_round / boxes
    doc: dict[str, Any] = {
        "rules": job.rules.to_dict(),
        "rounds": run.rounds,
        "ev": ev,
        "stderr": se,
        "ci95": [ev - 1.96 * se, ev + 1.96 * se],
        "house_edge": -ev,
        "rounds_per_second": run.rounds_per_second,
        "seconds": run.seconds,
        "workers": run.workers,
        "scheduler": run.scheduler,
        "kernel": run.job.kernel.value,
        "strategy": strategy,
        "seed": run.seed,
        "boxes": boxes,
        "wager": w,
        "chunks": run.chunks,
        "super_bonus_others": "counted" if job.others else "not counted",
        "rounds_played": int(played),
        "net_distribution": _net_distribution(res.hist, box_rounds),
        "bonuses": {
            name: {"count": int(res.cats[k]), "per_box_round": _per(res.cats[k], box_rounds)}
            for k, name in enumerate(CATEGORY_NAMES)
            if k != 0
        },
        "events": {
            name: {"count": int(res.cats[k]), "per_box_round": _per(res.cats[k], box_rounds)}
            for k, name in EVENT_NAMES.items()
        },
    }
    if job.hands_per_session or job.session_goal:
        doc["sessions"] = _sessions(run)
    if job.counting is not None:
        doc["counting"] = _counting(run)
    return doc


def _per(count: float, n: float) -> float:
    return float(count) / n if n else 0.0


def _net_distribution(hist: np.ndarray[Any, Any], n: float) -> dict[str, float]:
    """A round's net per box in wagers, to the nearest half wager: bin -> probability."""
    out: dict[str, float] = {}
    for i, count in iter_bins(hist):
        units = (i - K.HOFF) / 2
        key = f"{units:g}"
        if i == 0:
            key = f"<={units:g}"
        elif i == K.HBINS - 1:
            key = f">={units:g}"
        out[key] = count / n
    return out


def _sessions(run: Run) -> dict[str, Any]:
    job = run.job
    acc = run.result.acc
    n = acc[K.A_SESSIONS]
    mean, se = _mean_se(n, acc[K.A_SNET] / job.wager, acc[K.A_SSQ])
    sd = se * math.sqrt(n) if n else 0.0
    hist = run.result.sessions
    counts = {int(i) - job.session_offset: c for i, c in iter_bins(hist)}
    quantiles: dict[str, float] = {}
    if n:
        cum = np.cumsum(hist)
        for q in (0.05, 0.25, 0.5, 0.75, 0.95):
            i = int(np.searchsorted(cum, q * n))
            quantiles[f"{q:g}"] = float(i - job.session_offset)
    return {
        "hands_per_session": job.hands_per_session,
        "bankroll": job.bankroll,
        "goal": job.session_goal,
        "sessions": int(n),
        "ruined": int(acc[K.A_RUINED]),
        "risk_of_ruin": float(acc[K.A_RUINED] / n) if n else 0.0,
        "mean": mean,
        "sd": sd,
        "quantiles": quantiles,
        "histogram": {str(k): v for k, v in sorted(counts.items())},
        "units": "wagers; histogram bins are whole wagers rounded down",
    }


def _counting(run: Run) -> dict[str, Any]:
    job = run.job
    assert job.counting is not None
    acc = run.result.acc
    tcs = run.result.counts
    by_tc: dict[str, Any] = {}
    for b in range(K.TCBINS):
        n = tcs[b, 0]
        if not n:
            continue
        mean, se = _mean_se(n, tcs[b, 1], tcs[b, 2])
        tc = b - K.TCOFF
        key = f"<={tc}" if b == 0 else f">={tc}" if b == K.TCBINS - 1 else str(tc)
        by_tc[key] = {
            "rounds": int(n),
            "frequency": n / run.rounds,
            "ev": mean,
            "stderr": se,
            "units": int(job.ramp[b]),
        }
    wagered = acc[K.A_WAGERED]
    return {
        "system": job.counting.name,
        "tags": job.counting.table.get("tags", {}),
        "ramp": {str(k - K.TCOFF): int(job.ramp[k]) for k in range(K.TCBINS)},
        "ev_per_unit_wagered": float(acc[K.A_NET] / wagered) if wagered else 0.0,
        "average_wager": float(wagered / (acc[K.A_PLAYED] * job.boxes * job.wager))
        if acc[K.A_PLAYED]
        else 0.0,
        "ev_by_true_count": by_tc,
        "note": "ev by true count: flat one-wager play of every round dealt at that count",
    }


def text(doc: dict[str, Any]) -> str:
    """A short human summary."""
    rules = doc["rules"]
    strategy = doc["strategy"] + (
        f" and the indices of {doc['indices']}" if "indices" in doc else ""
    )
    lines = [
        f"{rules['name']}: {doc['rounds']:,} rounds, {doc['boxes']} box(es), "
        f"${doc['wager'] / 100:,.2f} wager, strategy {strategy}, seed {doc['seed']}",
        f"expected return {doc['ev'] * 100:+.4f} % ± {doc['stderr'] * 100:.4f} "
        f"(95 %: {doc['ci95'][0] * 100:+.4f} to {doc['ci95'][1] * 100:+.4f} %)",
        f"{doc['rounds_per_second'] / 1e6:.2f} M rounds/s on {doc['workers']} worker(s), "
        f"{doc['seconds']:.2f} s ({doc['kernel']} kernel)",
        "bonuses per 1,000 box-rounds: "
        + ", ".join(
            f"{k} {v['per_box_round'] * 1000:.3f}" for k, v in doc["bonuses"].items() if v["count"]
        ),
    ]
    if "sessions" in doc:
        s = doc["sessions"]
        lines.append(
            f"sessions of {s['hands_per_session']} hands with ${s['bankroll'] / 100:,.2f}: "
            f"{s['sessions']:,}, mean {s['mean']:+.2f} wagers (sd {s['sd']:.2f}), "
            f"risk of ruin {s['risk_of_ruin'] * 100:.2f} %"
        )
    if "counting" in doc:
        c = doc["counting"]
        lines.append(
            f"counting {c['system']}: {c['ev_per_unit_wagered'] * 100:+.4f} % per unit wagered, "
            f"average wager {c['average_wager']:.2f} units"
        )
        for tc, v in c["ev_by_true_count"].items():
            lines.append(
                f"  true count {tc:>4}: {v['frequency'] * 100:6.2f} % of rounds, "
                f"ev {v['ev'] * 100:+.3f} % ± {v['stderr'] * 100:.3f}, bet {v['units']}"
            )
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path: str) -> None:
    """A PNG: the distribution of a round's net (and of session results, with sessions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if "sessions" in doc else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    dist = doc["net_distribution"]
    xs = [float(k.lstrip("<>=")) for k in dist]
    ax = axes[0][0]
    ax.bar(xs, list(dist.values()), width=0.4)
    ax.set_yscale("log")
    ax.set_xlabel("net of one round, wagers")
    ax.set_ylabel("probability")
    ax.set_title(f"{doc['rules']['name']}: EV {doc['ev'] * 100:+.3f} % ± {doc['stderr'] * 100:.3f}")
    if panels == 2:
        s = doc["sessions"]
        ax = axes[0][1]
        ax.bar([int(k) for k in s["histogram"]], list(s["histogram"].values()), width=1.0)
        ax.set_xlabel(f"result of a {s['hands_per_session']}-hand session, wagers")
        ax.set_ylabel("sessions")
        ax.set_title(f"risk of ruin {s['risk_of_ruin'] * 100:.2f} %")
    fig.tight_layout()
    from pontoon.output import save_figure

    save_figure(fig, path)
