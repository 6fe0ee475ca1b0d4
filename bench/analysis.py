"""Time the exact analysis of nz-pontoon: the optimal total-dependent chart (target <= 10 s,
<= 1 GB, one core) and the composition-dependent optimum (target <= 60 s), 6 decks; and the
house edge with 8 decks. Then classic-blackjack's composition-dependent optimum (6 decks, CDZ-,
split to 4), the figure Eric Farmer's C++ analyser computes (docs/analysts/analysis.md, Side by
side); it runs first, in a fresh process, so no shared dealer tables help it.

Before them, the whole process as a user runs it: ``pontoon analyze --rules classic-blackjack
--strategy composition --json`` in a child process, its wall-clock seconds and peak resident
memory (the interpreter, its imports and the analysis). ``--farmer PROGRAM`` (Eric Farmer's
``strategy`` program, built from github.com/possibly-wrong/blackjack outside this repository)
times both side by side instead, alternately, ``--pairs`` times, and prints the medians; with
them the same game's distribution (``pontoon par --no-effects``: the exact distribution of a
round besides the EV).

Prints a line per analysis, then one JSON object as the last line, also appended to
bench/results/analysis.jsonl (bench/record.py; its fields: docs/reference/files.md).
Run: .venv/bin/python bench/analysis.py [--quick]   (--quick: the infinite shoe, seconds only)

``--measure-13-7`` instead measures the one approximation left in nz-pontoon
(docs/analysts/analysis.md): 13.7 with split hands takes "no split hand stood, given a dealer
pontoon" as independent hands. Here it is exact: any ordered sequence of draws from a shoe S
has probability ff(S, D) / ff(N, |D|) (ff: falling factorial, D the sequence's multiset), so
P(no hand stood) is a sum over multisets of the number of card sequences that end every hand
without standing, got by convolving each hand's count by multiset; the dealer's pontoon card is
set aside first (predictable sampling). About 2 minutes and 3 GB for nz-pontoon (8-8 splits to
four hands).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core: set before numpy loads

from collections import defaultdict
from math import lgamma

import numpy as np

import pontoon.analysis.split as split
from pontoon.analysis import analyze
from pontoon.analysis.composition import comp_of
from pontoon.analysis.evaluate import composition_scores, evaluate
from pontoon.analysis.game import DOUBLE, HIT, STAND, Context, Game, Values
from pontoon.rules import RuleSet, load_rules

PROCESS = ["analyze", "--rules", "classic-blackjack", "--strategy", "composition", "--json"]
# the same game's distribution (the PAR sheet's figures without the rule effects)
PAR_PROCESS = ["par", *PROCESS[1:5], "--no-effects", "--rounds", "0", "--json"]
# Farmer's strategy program's questions for the same game: 6 decks, S17, double any two cards
# (soft too, not after hitting), DAS, resplit (to 4 hands) but not aces, CDZ-, no surrender,
# blackjack 3:2; then the file for its table, and "0 0" ends its hand calculator.
FARMER_INPUT = "6\nn\ny\ny\nn\ny\ny\nn\ny\nn\n1.5\n{out}\n0 0\n"
BITS = 6  # a value's count in a multiset code (up to 63: four hands of up to 13 aces)
Poly = tuple[np.ndarray, np.ndarray]  # multiset codes, number of card sequences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the infinite shoe only")
    parser.add_argument("--measure-13-7", action="store_true", help="see the docstring")
    parser.add_argument("--farmer", help="Farmer's strategy program: time both side by side")
    parser.add_argument("--pairs", type=int, default=5, help="alternate runs of each (--farmer)")
    parser.add_argument("--before", help="with --farmer: an earlier source tree to time too")
    args = parser.parse_args()
    if args.measure_13_7:
        measure_13_7(load_rules("nz-pontoon"))
        return
    if args.farmer:
        side_by_side(args.farmer, args.pairs, args.before)
        return
    rules = load_rules("nz-pontoon")
    inf = args.quick
    process_s, process_mb = (None, None) if inf else whole_process()
    if process_s is not None:
        print(f"pontoon {' '.join(PROCESS)}: {process_s:.2f} s, peak {process_mb:.0f} MB")
    classic = analyze(load_rules("classic-blackjack"), "composition", infinite=inf)
    print(f"classic-blackjack composition: EV {classic.ev * 100:+.7f} % in {classic.seconds:.2f} s")
    basic = analyze(rules, "basic", infinite=inf)
    print(f"nz-pontoon basic: EV {basic.ev * 100:+.4f} % in {basic.seconds:.2f} s")
    comp = analyze(rules, "composition", infinite=inf)
    print(f"nz-pontoon composition: EV {comp.ev * 100:+.4f} % in {comp.seconds:.2f} s")
    eight = analyze(load_rules("nz-pontoon", {"decks": 8}), "basic", infinite=inf)
    print(f"nz-pontoon 8 decks basic: EV {eight.ev * 100:+.4f} % in {eight.seconds:.2f} s")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from record import emit  # bench/record.py, beside this file

    emit(
        {
            "bench": "analysis",
            "seconds_basic": round(basic.seconds, 3),
            "seconds_composition": round(comp.seconds, 3),
            "peak_mb": round(peak_mb, 1),
            "nz_pontoon_ev": basic.ev,
            "nz_pontoon_composition_ev": comp.ev,
            "nz_pontoon_8_decks_ev": eight.ev,
            "seconds_classic_composition": round(classic.seconds, 3),
            "classic_composition_ev": classic.ev,
            "process_seconds_classic_composition": process_s,
            "process_peak_mb_classic_composition": process_mb,
            "rules": "nz-pontoon",
            "infinite": inf,
            "cores": 1,
        }
    )


# ---------------------------------------------------------------- whole process, side by side
def _child(
    cmd: list[str], stdin: str | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, float, str]:
    """Run ``cmd`` alone; (wall-clock seconds, its CPU seconds, its peak resident MB, its
    stdout)."""
    code = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "p = subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True, "
        "text=True, check=True); s = time.perf_counter() - t; "
        "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(s, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024); print(p.stdout, end='')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *cmd],
        input=stdin or "",
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    out.check_returncode()
    first, _, rest = out.stdout.partition("\n")
    seconds, cpu, mb = first.split()
    return float(seconds), float(cpu), float(mb), rest


def _pontoon(args: list[str] = PROCESS) -> list[str]:
    return [str(Path(sys.executable).with_name("pontoon")), *args]


def _bytecode(package: Path) -> None:
    """Compile ``package``'s modules to bytecode first, as installing a package does (an
    interpreter told not to write bytecode, as on some hosts, would otherwise compile every
    module of ours in every run, and time that)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def whole_process() -> tuple[float, float]:
    """``pontoon analyze`` (classic CDZ-) as a fresh process: seconds and peak MB."""
    _bytecode(Path(__file__).resolve().parents[1] / "pontoon")
    seconds, _, mb, _ = _child(_pontoon())
    return round(seconds, 3), round(mb, 1)


def side_by_side(farmer: str, pairs: int, before: str | None) -> None:
    """Ours and Farmer's for classic CDZ-, and our distribution of it, alternately (and
    both of ``before``, a source tree of an earlier version of this project with its
    extension built in place, run with the same interpreter, in the same rounds): the
    medians, and the EVs."""
    runs: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    evs: dict[str, float] = {}
    loads = []
    for tree in (Path(__file__).resolve().parents[1], *([Path(before)] if before else [])):
        _bytecode(tree / "pontoon")
    with tempfile.TemporaryDirectory() as tmp:
        table = os.path.join(tmp, "table.txt")
        for _ in range(pairs):
            loads.append(os.getloadavg()[0])
            earlier = ["before", "before_distribution"] if before else []
            for who in ("pontoon", "farmer", "distribution", *earlier):
                if who == "farmer":
                    s, cpu, mb, _ = _child([farmer], FARMER_INPUT.format(out=table))
                    with open(table, encoding="utf-8") as f:
                        line = next(x for x in f if x.strip().startswith("Total |"))
                    evs[who] = float(line.split("|")[1].split()[0])
                else:
                    env = {"PYTHONPATH": before} if who.startswith("before") and before else None
                    args = PAR_PROCESS if who.endswith("distribution") else PROCESS
                    s, cpu, mb, text = _child(_pontoon(args), env=env)
                    evs[who] = json.loads(text)["ev"] * 100
                runs[who].append((s, cpu, mb))
    doc: dict[str, object] = {"bench": "analysis-side-by-side", "pairs": pairs}
    for who, rs in runs.items():
        s, cpu, mb = (statistics.median(r[k] for r in rs) for k in range(3))
        print(f"{who}: median {s:.2f} s ({cpu:.2f} s CPU), {mb:.0f} MB over {pairs} runs")
        doc |= {
            f"{who}_seconds": round(s, 3),
            f"{who}_cpu_seconds": round(cpu, 3),
            f"{who}_peak_mb": round(mb, 1),
            f"{who}_ev_percent": evs[who],
        }
    print("EV %: " + ", ".join(f"{who} {ev:+.9f}" for who, ev in evs.items()))
    print(f"1-minute load average at each round: {', '.join(f'{x:.2f}' for x in loads)}")
    doc |= {"load_average_median": statistics.median(loads), "cores": os.cpu_count()}
    from record import emit  # bench/record.py, beside this file

    emit(doc)


# ---------------------------------------------------------------- 13.7 independence, exact
def _encode(v: np.ndarray) -> int:
    return int(sum(int(c) << (BITS * i) for i, c in enumerate(v)))


def _log_ff(top: np.ndarray, k: np.ndarray) -> np.ndarray:
    lg = np.array([lgamma(i + 1.0) for i in range(int(np.max(top)) + 2)])
    return np.asarray(lg[top] - lg[top - k])


def _hand_sequences(game: Game, choice: np.ndarray, pair: int, second: int) -> dict[int, float]:
    """Card sequences of the split hand (pair, second) that end without standing (bust, or a
    21 paid at once), counted by the multiset of its cards besides the pair card."""
    c, r = game.comps, game.rules
    start = [0] * 10
    start[pair - 1] += 1
    start[second - 1] += 1
    own = np.eye(10, dtype=np.int64)[pair - 1]
    out: dict[int, float] = defaultdict(float)
    level = {c.index[tuple(start)]: 1.0}
    while level:
        nxt: dict[int, float] = defaultdict(float)
        for i, count in level.items():
            held = c.matrix[i] - own
            if int(c.total[i]) == 21:
                if r.player_21_wins:
                    out[_encode(held)] += count
                continue
            act = int(choice[i])
            if act == STAND:
                continue
            for y in range(10):
                child = int(c.child[i, y])
                drawn = held.copy()
                drawn[y] += 1
                if child < 0 or (act == DOUBLE and int(c.total[child]) == 21 and r.player_21_wins):
                    out[_encode(drawn)] += count
                elif act == HIT:
                    nxt[child] += count
        level = nxt
    return out


def _poly(d: dict[int, float]) -> Poly:
    return np.fromiter(d, np.int64, len(d)), np.fromiter(d.values(), np.float64, len(d))


def _pairs(a: Poly, b: Poly, rows: int) -> list[Poly]:
    step = max(1, rows // max(len(b[0]), 1))
    return [
        (
            (a[0][lo : lo + step, None] + b[0][None, :]).ravel(),
            (a[1][lo : lo + step, None] * b[1][None, :]).ravel(),
        )
        for lo in range(0, len(a[0]), step)
    ]


def _convolve(a: Poly, b: Poly) -> Poly:
    parts = [(*np.unique(cc, return_inverse=True), ww) for cc, ww in _pairs(a, b, 4_000_000)]
    codes = np.concatenate([u for u, _, _ in parts])
    weights = np.concatenate([np.bincount(inv, weights=ww) for _, inv, ww in parts])
    u, inv = np.unique(codes, return_inverse=True)
    return u, np.bincount(inv, weights=weights)


def _probability(a: Poly, b: Poly, shoe: np.ndarray) -> float:
    """Sum over the sequences of a then b of their probability from ``shoe``."""
    total = 0.0
    n = np.array([int(shoe.sum())])
    for cc, ww in _pairs(a, b, 2_000_000):
        d = (cc[:, None] >> np.arange(0, 10 * BITS, BITS)) & ((1 << BITS) - 1)
        ok = (d <= shoe).all(axis=1)
        d, ww = d[ok], ww[ok]
        logp = _log_ff(np.broadcast_to(shoe, d.shape), d).sum(axis=1)
        logp -= _log_ff(np.broadcast_to(n, (len(d),)), d.sum(axis=1))
        total += float((ww * np.exp(logp)).sum())
    return total


def _structures(hands: int) -> dict[tuple[int, int, int], int]:
    """(resplits, hands finished before the last resplit, after it): number of orders."""
    out: dict[tuple[int, int, int], int] = defaultdict(int)

    def walk(made: int, done: int, r: int, n: int, x: int) -> None:
        if done == made:
            out[r, n, x] += 1
        elif made < hands:
            walk(made + 1, done, r + 1, n, x)
            walk(made, done + 1, r, n + 1, x)
        else:
            walk(made, done + 1, r, n, x + 1)

    walk(2, 0, 0, 0, 0)
    return out


def exact_none_stood(game: Game, pair: int, up: int, choice: np.ndarray) -> float:
    """P(dealer pontoon and no split hand stood), ``pair`` split against ``up``."""
    shoe = game.shoe.counts.astype(np.int64)
    shoe[up - 1] -= 1
    shoe[pair - 1] -= 2
    completing = 9 if up == 1 else 0
    p_pontoon = shoe[completing] / shoe.sum()
    shoe[completing] -= 1
    seqs = {x: _hand_sequences(game, choice, pair, x) for x in range(1, 11)}
    non_pair: dict[int, float] = defaultdict(float)
    any_card: dict[int, float] = defaultdict(float)
    for x, d in seqs.items():
        for k, v in d.items():
            any_card[k] += v
            if x != pair:
                non_pair[k] += v
    gn, gx = _poly(non_pair), _poly(any_card)
    resplit = (np.array([_encode(np.eye(10, dtype=np.int64)[pair - 1])]), np.array([1.0]))
    total = 0.0
    for (r, n, x), orders in _structures(split.max_hands(game, pair)).items():
        factors = [resplit] * r + [gn] * n + [gx] * x
        acc = factors[0]
        for f in factors[1:-1]:
            acc = _convolve(acc, f)
        total += orders * _probability(acc, factors[-1], shoe)
    return float(p_pontoon * total)


def independent_none_stood(game: Game, pair: int, values: dict[int, Values]) -> np.ndarray:
    """(10 up,) what split.split_value takes for P(dealer pontoon and no hand stood)."""
    c = game.comps
    m0 = split.pair_cards_left(game, pair)
    two = np.array([c.index[comp_of([pair, x])] for x in range(1, 11)])
    per_j = {j: split._hand_values(game, pair, j, v, two, m0) for j, v in values.items()}
    out = np.zeros(10)
    total = game.shoe.size - 3
    for u in range(10):
        pats = split.patterns(split.max_hands(game, pair), float(m0[u]), total - float(m0[u]), None)
        for prob, r, n, x in pats:
            if prob <= 0:
                continue
            _, s_n = split._removed(per_j, u, r, max(n - 1, 0), m0[u], total, 1, (0, 1))
            _, s_x, pn = split._removed(per_j, u, r, n, m0[u], total, 0, (2, 3, 4))
            if pn > 0:
                out[u] += prob * pn * (1 - s_n / pn) ** n * (1 - s_x / pn) ** x
    return out


def measure_13_7(rules: RuleSet) -> None:
    """Print the independence error of every split against an ace or a ten the composition
    strategy makes, and its sum in the house edge."""
    game = Game(rules)
    base = game.evaluate(Context())
    post = composition_scores(base)
    outcome = evaluate(game, None)
    total = 0.0
    for pair in range(1, 10):
        k = next(k for k, (_i, a, b) in enumerate(outcome.hands) if a == b == pair)
        ups = [u for u in (1, 10) if int(outcome.choice[k, u - 1]) == 4]  # split
        if split.max_hands(game, pair) < 2 or not ups:
            continue
        values = split.split_hand_values(game, pair, post, "cdz")
        approx = independent_none_stood(game, pair, values)
        for u in ups:
            exact = exact_none_stood(game, pair, u, values[1].choice[:, u - 1])
            weight = outcome.up_prob[u - 1] * outcome.deal_prob[k, u - 1]
            error = approx[u - 1] - exact
            total += weight * error
            print(
                f"{pair}-{pair} against {u}: exact {exact:.6e}, independent {approx[u - 1]:.6e}"
                f", error {error:+.3e} per split, {weight * error * 100:+.2e} pp"
            )
    from record import emit  # bench/record.py, beside this file

    emit({"bench": "analysis-13.7", "error_pp": total * 100})


if __name__ == "__main__":
    main()
