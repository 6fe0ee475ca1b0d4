"""``pontoon count eor|judge`` (wired into :mod:`pontoon.cli`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pontoon.argtypes import finite, outfile, seed, whole
from pontoon.errors import InputError
from pontoon.rules import RuleSet

if TYPE_CHECKING:
    from pontoon.count.eor import Effects
    from pontoon.count.indices import Indices
    from pontoon.count.ramp import Table
    from pontoon.sim.counting import Counting


def add_options(
    p: argparse.ArgumentParser, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """The ``count`` command and its subcommands."""
    sub = p.add_subparsers(dest="count_command", required=True, parser_class=type(p))
    for name, text in (
        ("eor", "effects of removal: the EV's change when one card of a rank leaves the shoe"),
        ("judge", "a count's betting correlation, playing efficiency, insurance correlation"),
        ("indices", "strategy indices: the true count where each cell's best play changes"),
        ("ramp", "bets and risk: Kelly bets by true count, win rate, SCORE, N0, risk of ruin"),
    ):
        q = sub.add_parser(name, help=text)
        common(q)
        if name in ("eor", "judge"):
            q.add_argument(
                "--strategy",
                choices=("basic", "composition"),
                default="basic",
                help="basic: the full shoe's chart fixed (default); composition: re-optimised",
            )
        wager = "the minimum bet" if name == "ramp" else "the wager"
        q.add_argument("--wager", type=whole, default=500, help=f"{wager} in cents (500)")
        q.add_argument("--workers", type=whole, help="local processes (default: all cores)")
        q.add_argument("--scheduler", help="address of a Dask distributed scheduler")
        q.add_argument("--no-progress", action="store_true", help="no progress bar")
        if name == "indices":
            q.add_argument("--count", default="hi-lo", help="hi-lo or a TOML file (tags)")
            q.add_argument(
                "--depth",
                default="0.5",
                help="the part of the shoe left (0.5), or several (0.75,0.5,0.25): by depth",
            )
            q.add_argument("--format", choices=("text", "csv", "png"), default="text")
            q.add_argument(
                "--output", type=outfile, help="write here (required for png; default stdout)"
            )
            q.add_argument(
                "--rounds",
                type=whole,
                default=0,
                help="by simulation instead: rounds to deal, each box's first decision a random "
                "legal play (default 0: by exact analysis of expected shoes)",
            )
            q.add_argument("--seed", type=seed, default=1, help="seed of that simulation")
        if name == "ramp":
            q.add_argument("--count", default="hi-lo", help="hi-lo or a TOML file (tags)")
            q.add_argument("--bankroll", type=whole, required=True, help="bankroll in cents")
            q.add_argument("--spread", type=finite, required=True, help="largest bet / smallest")
            q.add_argument("--chip", type=whole, help="bets are whole chips of this many cents")
            q.add_argument("--kelly", type=finite, default=1.0, help="part of a Kelly bet (1)")
            q.add_argument("--wong-out", type=whole, help="sit out below this true count")
            q.add_argument(
                "--boxes-from",
                action="append",
                default=[],
                metavar="TC:N",
                help="play N boxes from true count TC up (e.g. 3:2); again for more",
            )
            q.add_argument("--rounds", type=whole, default=0, help="simulate the EV by count")
            q.add_argument("--seed", type=seed, default=1, help="seed of that simulation")
            q.add_argument(
                "--hands",
                type=whole,
                default=0,
                help="also the risk of ruin within this many rounds (with --rounds: simulated "
                "too, sessions of that length playing the ramp)",
            )
            q.add_argument(
                "--goal",
                type=whole,
                default=0,
                metavar="K",
                help="with --rounds: the risk of ruin without end simulated too, sessions "
                "playing the ramp until ruin or until the bankroll has grown K-fold (2-10)",
            )
        if name == "judge":
            q.add_argument("--count", default="hi-lo", help="hi-lo or a TOML file (tags)")
            q.add_argument(
                "--rounds",
                type=whole,
                default=0,
                help="rounds to simulate for the EV by true count (default 0: the line only)",
            )
            q.add_argument("--seed", type=seed, default=1, help="seed of that simulation")
            q.add_argument("--plot", type=outfile, help="write the EV by true count here (PNG)")


def count_command(rules: RuleSet, args: argparse.Namespace) -> int:
    from pontoon.count.eor import KEYS, effects_of_removal

    workers = args.workers if args.workers is not None else os.cpu_count() or 1
    if workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    if args.wager < 1:
        raise InputError(f"--wager must be a positive number of cents, not {args.wager}")
    from pontoon.cluster import check_scheduler

    check_scheduler(args.scheduler)
    if args.count_command == "indices":
        return _indices(rules, args, workers)
    if args.count_command == "ramp":
        return _ramp(rules, args, workers)
    counting = _counting(args.count) if args.count_command == "judge" else None
    tags = _tags(counting) if counting is not None else None
    if counting is not None and args.rounds < 0:
        raise InputError(f"--rounds must be 0 or more, not {args.rounds}")
    effects = effects_of_removal(
        rules,
        args.strategy,
        wager=args.wager,
        workers=workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    doc: dict[str, Any] = effects.to_json()
    if counting is not None and tags is not None:
        from pontoon.count.curve import curve, plot, slope
        from pontoon.count.judge import judge

        simulated = _simulate(rules, effects, counting, args) if args.rounds else None
        insures = _insure_from(rules, counting) if args.rounds else None  # (as simulated)
        rows = curve(effects, tags, simulated, insures)
        doc = (
            {"count": args.count, "tags": tags}
            | judge(effects, tags)
            | {"eor": effects.eor, "ev": effects.ev, "ev_per_true_count": slope(effects, tags)}
            | {"ev_by_true_count": rows, "rounds": args.rounds, "seed": args.seed}
            | {"insures_from": insures}
        )
        if args.plot:
            title = f"{rules.name}, {args.count}: EV by true count"
            insured = f", insuring from {insures:+d}" if insures is not None else ""
            plot(rows, title + insured, args.plot)
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"{rules.name}: {doc.get('played') or effects.to_json()['played']}")
    print(f"full shoe EV {effects.ev * 100:+.4f} %")
    print("effect of removing one card (percentage points):")
    print("  " + "  ".join(f"{k:>7}" for k in KEYS))
    print("  " + "  ".join(f"{effects.eor[k] * 100:+7.4f}" for k in KEYS))
    if tags is None:
        why = (
            "above 0: each shoe's play re-optimised"
            if args.strategy == "composition"
            else "0 for a fixed strategy, but for the analysis's approximations: "
            "docs/analysts/count.md"
        )
        print(f"sum over the shoe's cards {effects.sum * 100:+.2e} ({why})")
        return 0
    print(f"count {args.count}: " + " ".join(f"{k}={tags[k]:+g}" for k in KEYS))
    for key in ("betting_correlation", "playing_efficiency", "insurance_correlation"):
        print(f"  {key.replace('_', ' '):<22} {doc[key]:.3f}")
    print(f"  EV per true count      {doc['ev_per_true_count'] * 100:+.4f} pp (linear)")
    for row in doc["ev_by_true_count"]:
        if "simulated" in row and row["rounds"] >= 1000 and row["linear"] is not None:
            print(
                f"  true count {row['true_count']:+3d}: linear {row['linear'] * 100:+.3f} %, "
                f"simulated {row['simulated'] * 100:+.3f} % ± {row['stderr'] * 100:.3f} "
                f"({row['rounds']:,} rounds)"
            )
    for level, best in doc["best_counts"].items():
        shown = " ".join(f"{k}={v:+d}" for k, v in best["tags"].items())
        rho = best["betting_correlation"]
        print(f"  best level-{level} count: {shown} (betting correlation {rho:.3f})")
    return 0


def _indices(rules: RuleSet, args: argparse.Namespace, workers: int) -> int:
    from pontoon.count.indices import strategy_indices

    tags = _tags(_counting(args.count))
    if args.format == "png" and not args.output:
        raise InputError("--format png needs --output FILE")
    try:
        depths = tuple(float(d) for d in args.depth.split(","))
    except ValueError:
        raise InputError(
            f"--depth takes parts of the shoe left, e.g. 0.5 or 0.75,0.5,0.25, not {args.depth!r}"
        ) from None
    if args.format == "png" and len(depths) > 1:
        raise InputError("--format png draws one depth: give --depth one part of the shoe")
    if args.rounds:
        from pontoon.count.simulated import simulated_indices

        ix = simulated_indices(
            rules,
            _counting(args.count),
            args.count,
            rounds=args.rounds,
            seed=args.seed,
            wager=args.wager,
            workers=workers,
            scheduler=args.scheduler,
            progress=False if args.no_progress else None,
        )
        return _show_indices(rules, args, ix, tags)
    ix = strategy_indices(
        rules,
        tags,
        args.count,
        depths=depths,
        wager=args.wager,
        workers=workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    return _show_indices(rules, args, ix, tags)


def _show_indices(
    rules: RuleSet, args: argparse.Namespace, ix: Indices, tags: dict[str, float]
) -> int:
    """``count indices``' output: JSON, a PNG chart, CSV or text; the JSON and the text say
    how far an unbalanced count's (``tags``) true count drifts (``drift_per_deck``)."""
    from pontoon.count.indices import drift_per_deck

    drift = drift_per_deck(rules, tags)
    if args.json:
        print(json.dumps(ix.to_json() | {"drift_per_deck": drift}))
    elif args.format == "png":
        from pontoon.analysis.render import chart_png

        notes = {
            (i["cell"], _up(i["dealer"])): f"{i['above']}{i['index']:+d}"
            for i in ix.indices
            if i["cell"] != "insurance" and i["index"] is not None
        }
        title = f"Index chart ({args.count}: the play from the true count shown up"
        insure = [i["index"] for i in ix.indices if i["cell"] == "insurance"]
        if insure and insure[0] is not None:
            title += f"; insurance from {insure[0]:+d}"
        title += ")"
        chart_png(ix.chart, rules, None, args.output, notes, title)
    elif args.format == "csv":
        text = ix.to_csv()
        if args.output:
            from pontoon.output import write_text

            write_text(args.output, text)
        else:
            sys.stdout.write(text)
    else:
        shown = ", ".join(f"{d:.0%}" for d in ix.depths)
        how = f"at {shown} of the shoe left" if shown else f"simulated, {ix.rounds:,} rounds"
        print(f"{rules.name}, {args.count}: indices {how}")
        if abs(drift) > 1e-9:
            print(
                f"  {args.count} is unbalanced here ({drift:+g} a deck): its true count drifts as"
                " the shoe is dealt, and one depth's indices are off at the others"
                " (--depth, or a balanced count: docs/analysts/count.md)"
            )
        print("  cell       dealer  below  above  index" + ("  depth" if ix.by_depth else ""))
        for i in ix.indices:
            cells = f"  {i['cell']:<10} {i['dealer']:>6}  {i['below']:>5}  {i['above']:>5}"
            line = f"{cells}  {i['index']:+5d}" if i["index"] is not None else f"{cells}       "
            print(line + (f"  {i['depth']:>5.0%}" if ix.by_depth else ""))
    return 0


# the rounds of two boxes that ``count ramp --boxes-from`` simulates for their covariance
# without --rounds (its standard error about 0.0015 a unit squared)
COVARIANCE_ROUNDS = 1_000_000


def _ramp(rules: RuleSet, args: argparse.Namespace, workers: int) -> int:
    from pontoon.analysis.distribution import round_distribution
    from pontoon.analysis.report import analyze
    from pontoon.count.eor import effects_of_removal
    from pontoon.count.ramp import Table, ramp

    if not rules.table_min <= args.wager <= rules.table_max:
        raise InputError(
            f"--wager (the minimum bet) must be between the table minimum {rules.table_min} "
            f"and maximum {rules.table_max} (15.6, 15.2), not {args.wager}"
        )
    counting = _counting(args.count)
    tags = _tags(counting)
    table = Table(
        args.wager,
        args.spread,
        args.chip or args.wager,
        rules.table_max,
        args.kelly,
        args.wong_out,
        _boxes_from(args.boxes_from),
    )
    table.check()
    if args.bankroll < args.wager:
        raise InputError(f"--bankroll must cover the minimum bet {args.wager}, not {args.bankroll}")
    if args.rounds < 0 or args.hands < 0:
        raise InputError("--rounds and --hands must be 0 or more")
    if args.goal and not (2 <= args.goal <= 10 and args.rounds):
        raise InputError(f"--goal must be 2 to 10 and needs --rounds, not {args.goal}")
    if (args.hands or args.goal) and args.rounds and table.chip % args.wager:
        raise InputError("a simulated ramp bets whole units: --chip must be a multiple of --wager")
    effects = effects_of_removal(
        rules,
        "basic",
        wager=args.wager,
        workers=workers,
        scheduler=args.scheduler,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    simulated = _simulate(rules, effects, counting, args) if args.rounds else None
    report = analyze(rules, effects.chart or "basic", wager=args.wager)
    dist = round_distribution(report)
    covariance = None
    if table.boxes:  # two boxes' covariance, simulated: the exact model's leaves out the
        # cards each box takes from the other's shoe (docs/analysts/par.md)
        from pontoon.analysis.covariance import simulated_covariance

        assert report.chart is not None  # (the basic chart, or the effects' chart)
        rounds = args.rounds or COVARIANCE_ROUNDS
        covariance = simulated_covariance(
            rules, report.chart, args.wager, rounds, args.seed, workers
        )
    doc = {"count": args.count, "spread": args.spread, "kelly": args.kelly} | ramp(
        effects,
        tags,
        args.bankroll,
        table,
        dist.variance,
        simulated,
        covariance.value if covariance is not None else 0.0,
    )
    if args.rounds:  # 10: the simulated player insures from the count's exact index
        doc["insures_from"] = _insure_from(rules, counting)
    if covariance is None:
        doc["covariance"] = None  # (one box at every count: none is needed)
    else:
        doc |= {"covariance_se": covariance.se, "covariance_rounds": covariance.rounds}
    if args.hands:
        from pontoon.count.ramp import ruin_within

        w, v = doc["win_per_100"] / 100, doc["variance"]
        doc["hands"] = args.hands
        doc["risk_of_ruin_within"] = ruin_within(w, v, args.bankroll, args.hands)
        if args.rounds:
            doc["simulated_risk_of_ruin_within"] = _ruin_simulated(
                rules, effects, counting, table, doc, args, args.hands, 0
            )
    if args.goal:
        doc["simulated_risk_of_ruin"] = _ruin_simulated(
            rules, effects, counting, table, doc, args, 0, args.goal
        )
    if args.json:
        print(json.dumps(doc))
        return 0
    print(
        f"{rules.name}, {args.count}: bankroll {args.bankroll / 100:,.2f}, spread 1-{args.spread:g}"
    )
    print("  true count  bet")
    for tc, bet in doc["bets"].items():
        n = doc["boxes"].get(tc, 1)
        print(f"  {int(tc):+10d}  {bet / 100:,.2f}" + (f" on each of {n} boxes" if n > 1 else ""))
    print(
        f"  win per 100 rounds {doc['win_per_100'] / 100:+,.2f}, sd {doc['sd_per_100'] / 100:,.2f}"
    )
    n0 = f"{doc['n0']:,.0f}" if doc["n0"] is not None else "never"
    print(f"  SCORE {doc['score']:.2f}, DI {doc['di']:.2f}, N0 {n0} rounds")
    print(f"  risk of ruin {doc['risk_of_ruin'] * 100:.2f} % ({doc['source']} EV by count)")
    if args.hands:
        line = f"  within {args.hands:,} rounds {doc['risk_of_ruin_within'] * 100:.2f} %"
        sim = doc.get("simulated_risk_of_ruin_within")
        if sim is not None:
            line += f"; simulated {sim['risk'] * 100:.2f} % ± {sim['stderr'] * 100:.2f}"
        print(line)
    sim = doc.get("simulated_risk_of_ruin")
    if sim is not None:
        print(
            f"  without end, simulated {sim['risk'] * 100:.2f} % ± {sim['stderr'] * 100:.2f} "
            f"({sim['sessions']:,} sessions to ruin or x{sim['goal']})"
        )
    return 0


def _ruin_simulated(
    rules: RuleSet,
    effects: Effects,
    counting: Counting,
    table: Table,
    doc: dict[str, Any],
    args: argparse.Namespace,
    hands: int,
    goal: int,
) -> dict[str, Any]:
    """Sessions playing the ramp's bets (on the ramp's boxes at each count: one player's
    sessions) from ``--bankroll``: of ``hands`` rounds, or until the bankroll has grown
    ``goal``-fold. The share ruined, with its standard error; with a goal, the risk without
    end, :func:`pontoon.count.ramp.ruin_beyond`."""
    from pontoon.count.ramp import ruin_beyond
    from pontoon.sim.counting import Counting as Count
    from pontoon.sim.job import Job
    from pontoon.sim.kernel import TCOFF
    from pontoon.sim.results import document
    from pontoon.sim.runner import simulate

    units = {tc: bet // args.wager for tc, bet in doc["bets"].items()}
    if not any(units.values()):
        raise InputError("the ramp never bets")
    ramped = Count.from_dict({"tags": counting.table["tags"], "ramp": units}, counting.name)
    by_count = [table.boxes_at(tc) for tc in range(-TCOFF, TCOFF + 1)]
    assert effects.chart is not None
    job = Job.build(
        rules,
        effects.chart,
        boxes=max(by_count),
        wager=args.wager,
        counting=ramped,
        hands_per_session=hands,
        bankroll=args.bankroll,
        boxes_by_count=by_count,
        session_goal=(goal - 1) * args.bankroll if goal else 0,
        one_player=True,
        insure_from=_insure_from(rules, counting),
    )
    show = False if args.no_progress else None
    run = simulate(
        job, args.rounds, args.seed, workers=args.workers, scheduler=args.scheduler, progress=show
    )
    s = document(run, "basic")["sessions"]
    p, n = s["risk_of_ruin"], s["sessions"]
    se = (p * (1 - p) / n) ** 0.5 if n else 0.0
    out = {"risk": p, "stderr": se, "sessions": n}
    if goal:
        risk, beyond, scale = ruin_beyond(p, goal)
        out = {
            "risk": risk,
            "stderr": se * scale,
            "sessions": n,
            "goal": goal,
            "ruined_before_goal": p,
            "beyond_goal": beyond,
        }
    return out


def _boxes_from(items: list[str]) -> tuple[tuple[int, int], ...]:
    """``--boxes-from TC:N`` options."""
    out = []
    for item in items:
        try:
            tc, n = (int(x) for x in item.split(":"))
        except ValueError:
            raise InputError(
                f"--boxes-from takes TRUE_COUNT:BOXES, e.g. 3:2, not {item!r}"
            ) from None
        out.append((tc, n))
    return tuple(out)


def _up(dealer: str) -> int:
    return 1 if dealer == "A" else 10 if dealer == "T" else int(dealer)


def _counting(source: str) -> Counting:
    """hi-lo or a TOML file of ``tags`` (a ``ramp`` is not needed: the EV by true count is
    flat play), read and checked by :mod:`pontoon.sim.counting`."""
    import tomllib
    from pathlib import Path

    from pontoon.sim.counting import Counting

    if source == "hi-lo":
        return Counting.builtin(source)
    path = Path(source)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{source}: not a TOML counting file ({exc})") from None
    return Counting.from_dict({"ramp": {"0": 1}} | data, path.stem)


def _insure_from(rules: RuleSet, counting: Counting) -> int | None:
    """10: the true count from which the count's simulated player insures against an ace:
    the exact index of the count at half the shoe (``count indices``'s insurance row); None
    where the rules offer no insurance or it never pays its way within -10..+10."""
    if not rules.insurance:
        return None
    from pontoon.count.indices import insurance_index

    index = insurance_index(rules, _tags(counting), 0.5)["index"]
    return None if index is None else int(index)


def _tags(counting: Counting) -> dict[str, float]:
    """A count's tags by key (A, 2-9, T)."""
    from pontoon.count.eor import KEYS

    by_rank = [int(counting.tags[r]) for r in range(13)]  # the first suit's codes: ranks
    if len(set(by_rank[9:])) > 1:
        raise InputError(f"{counting.name}: the ten-value ranks have different tags")
    if len(set(by_rank)) < 2:
        raise InputError(f"{counting.name}: every card has the same tag: it counts nothing")
    return {key: float(by_rank[k]) for k, key in enumerate(KEYS)}


def _simulate(
    rules: RuleSet, effects: Effects, counting: Counting, args: argparse.Namespace
) -> dict[str, Any]:
    """``simulate --count``'s EV by true count, the full shoe's chart played."""
    from pontoon.analysis.report import analyze
    from pontoon.sim.job import Job
    from pontoon.sim.results import document
    from pontoon.sim.runner import simulate

    chart = effects.chart or analyze(rules, "basic", wager=args.wager).chart
    assert chart is not None
    insure = _insure_from(rules, counting)
    job = Job.build(rules, chart, wager=args.wager, counting=counting, insure_from=insure)
    show = False if args.no_progress else None
    run = simulate(
        job, args.rounds, args.seed, workers=args.workers, scheduler=args.scheduler, progress=show
    )
    by_tc: dict[str, Any] = document(run, "basic")["counting"]["ev_by_true_count"]
    return by_tc
