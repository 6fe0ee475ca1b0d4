"""Tabular Q-learning on the vector environment (docs/researchers/env.md): learn to play
nz-pontoon (or
any rule set) from rewards alone, write the greedy policy as a strategy chart, and score it
exactly with the combinatorial analysis beside the optimal chart; then play the optimal
chart through the env and compare its mean reward with the analysis's EV.

Run: .venv/bin/python examples/q_learning.py [--rules nz-pontoon] [--steps 40000000]
     [--output q-chart.csv] [--check-rounds 10000000]
then: .venv/bin/pontoon analyze --strategy q-chart.csv --json
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from pontoon.analysis import analyze
from pontoon.analysis.chart import HARD_ROWS, PAIR_ROWS, RESCUE_TOTALS, SOFT_ROWS, UP_VALUES, Chart
from pontoon.env import PontoonVectorEnv
from pontoon.env.chart_policy import ChartPolicy
from pontoon.rules import load_rules, parse_set_options

HIT, STAND, DOUBLE, SPLIT, SURRENDER, RESCUE = range(6)
DECIDE = 2


def state_of(obs: dict[str, Any]) -> np.ndarray:
    """A state number for each table: total, soft, pair value, dealer's card, two cards,
    from a split, doubled, split aces."""
    s = obs["total"] * 2 + obs["soft"]
    s = (s * 11 + obs["pair"]) * 11 + obs["up"]
    s = (s * 2 + (obs["cards"] == 2)) * 2 + obs["from_split"]
    return (s * 2 + obs["doubled"]) * 2 + obs["split_aces"]


NSTATES = 32 * 2 * 11 * 11 * 16


def state(total: int, soft: int, pair: int, up: int, two: int, doubled: int = 0) -> int:
    """The state of a hand not from a split (as a chart's cell reads it)."""
    one = {"total": total, "soft": soft, "pair": pair, "up": up, "cards": 2 if two else 3}
    one.update(from_split=0, doubled=doubled, split_aces=0)
    return int(state_of({k: np.array(v) for k, v in one.items()}))


def learn(env: PontoonVectorEnv, steps: int, epsilon: float, seed: int) -> tuple[Any, Any]:
    n = env.num_envs
    na = len(env.action_names)
    q = np.zeros((NSTATES, na))
    visits = np.zeros((NSTATES, na))
    rng = np.random.default_rng(seed)
    bet, no_ins = env.action_names.index("bet"), env.action_names.index("no-insurance")
    obs, _ = env.reset(seed=seed)
    for _ in range(steps // n):
        s = state_of(obs)
        mask = obs["action_mask"].astype(bool)
        greedy = np.where(mask, q[s], -np.inf).argmax(axis=1)
        explore = np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)
        a = np.where(rng.random(n) < epsilon, explore, greedy)
        a = np.where(obs["phase"] == 0, bet, np.where(obs["phase"] == 1, no_ins, a))
        deciding = obs["phase"] == DECIDE
        obs, reward, term, _, _ = env.step(a)
        nxt = state_of(obs)
        nmask = obs["action_mask"].astype(bool)
        future = np.where(nmask, q[nxt], -np.inf).max(axis=1)
        target = np.where(term | (obs["phase"] != DECIDE), reward, future)
        k = np.flatnonzero(deciding)
        flat = s[k] * na + a[k]
        count = np.bincount(flat, minlength=q.size)
        total = np.bincount(flat, weights=target[k] - q.ravel()[flat], minlength=q.size)
        visits.ravel()[:] += count
        hit = count > 0
        q.ravel()[hit] += total[hit] / visits.ravel()[hit]  # the running mean of the targets
    return q, visits


def code_of(q2: Any, v2: Any, q3: Any, v3: Any, pair: bool) -> str:
    """A chart cell from the Q-values of the two-card state (q2, visits v2) and of the
    states of more cards with the same total (q3, v3): its first choice, then hit or stand."""
    seen = v2 > 0
    if not seen.any():
        seen, q2 = v3 > 0, q3
    if not seen.any():
        return "H"
    order = [int(x) for x in np.argsort(-np.where(seen, q2, -np.inf)) if seen[x]]
    w2, w3 = v2[[HIT, STAND]], v3[[HIT, STAND]]
    both = np.where(
        w2 + w3 > 0,
        (q2[[HIT, STAND]] * w2 + q3[[HIT, STAND]] * w3) / np.maximum(w2 + w3, 1),
        -np.inf,
    )
    hs = "H" if both[0] >= both[1] else "S"
    if pair and order[0] == SPLIT:
        return "P"
    if pair and order[0] == SURRENDER and len(order) > 1 and order[1] == SPLIT:
        return "Rp"
    if order[0] == DOUBLE:
        return "D" if hs == "H" else "Ds"
    if order[0] == SURRENDER:
        return "R" if hs == "H" else "Rs"
    return hs


def to_chart(q: Any, visits: Any, rescue: bool) -> Chart:
    chart = Chart.initial()
    for up in UP_VALUES:
        for row in (*HARD_ROWS, *SOFT_ROWS):
            t, soft = int(row[1:]), int(row[0] == "S")
            a, b = state(t, soft, 0, up, 1), state(t, soft, 0, up, 0)
            chart.set(row, up, code_of(q[a], visits[a], q[b], visits[b], False))
        for row in PAIR_ROWS:
            v = {"PA": 1, "PT": 10}.get(row) or int(row[1:])
            t, soft = (12, 1) if v == 1 else (2 * v, 0)
            a, b = state(t, soft, v, up, 1), state(t, soft, 0, up, 0)
            chart.set(row, up, code_of(q[a], visits[a], q[b], visits[b], True))
    if not rescue:
        return chart
    chart = chart.with_rescues()
    for up in UP_VALUES:
        for t in RESCUE_TOTALS:
            ks = [state(t, soft, 0, up, 0, 1) for soft in (0, 1)]
            gain = sum((q[k, RESCUE] - q[k, STAND]) * visits[k, RESCUE] for k in ks)
            chart.set(f"X{t}", up, "R" if gain > 0 else "S")
    return chart


def play_chart(rules: Any, chart: Chart, rounds: int, seed: int) -> tuple[float, float]:
    """The mean reward of ``chart`` through the env and its standard error, each round
    dealt from a freshly shuffled shoe (as the analysis assumes)."""
    env = PontoonVectorEnv(4096, rules.replace(penetration=0.001))  # a shuffle every round
    policy = ChartPolicy(env.table, chart)
    obs, _ = env.reset(seed=seed)
    total = square = done = 0.0
    while done < rounds:
        obs, reward, term, _, _ = env.step(policy(obs))
        r = reward[term]
        total, square, done = total + r.sum(), square + (r * r).sum(), done + len(r)
    mean = total / done
    return mean, float(np.sqrt((square / done - mean * mean) / done))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rules", default="nz-pontoon")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--steps", type=int, default=40_000_000, help="env steps to learn from")
    p.add_argument("--tables", type=int, default=4096)
    p.add_argument("--epsilon", type=float, default=0.25)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--output", default="q-chart.csv")
    p.add_argument("--check-rounds", type=int, default=10_000_000, help="0: skip the check")
    args = p.parse_args()
    rules = load_rules(args.rules, parse_set_options(args.set))
    start = time.perf_counter()
    env = PontoonVectorEnv(args.tables, rules, copy=False)
    q, visits = learn(env, args.steps, args.epsilon, args.seed)
    learned = time.perf_counter() - start
    chart = to_chart(q, visits, rules.double_rescue)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(chart.to_csv())
    ours = analyze(rules, chart).ev
    best = analyze(rules, "basic")
    out: dict[str, Any] = {
        "rules": rules.name,
        "steps": args.steps,
        "learning_seconds": round(learned, 1),
        "chart": args.output,
        "q_chart_ev": ours,
        "optimal_chart_ev": best.ev,
        "difference_pp": (ours - best.ev) * 100,
        "cells_differing": sum(
            chart.code(r, u) != best.chart.code(r, u) for r in chart.rows() for u in UP_VALUES
        )
        if best.chart is not None
        else None,
    }
    if args.check_rounds and best.chart is not None:
        mean, se = play_chart(rules, best.chart, args.check_rounds, args.seed)
        out.update(env_mean=mean, env_se=se, env_z=(mean - best.ev) / se)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
