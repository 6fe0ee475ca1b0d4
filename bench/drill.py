"""Time the strategy drill as the table server's trainer steps it: CPU seconds per drill
started and per answer, in this process, as the trainer's worker spends them
(``pontoon.server.train``'s own ``_begin`` and ``_step``, without the worker's rest).

A learner, seeded, starts drills of 20 decisions (a preset and a mode at random, as
``bench/server.py --drills`` does) and answers each question with a legal play at random
(the hands a random play makes are many, and each new hand is analysed exactly: a demanding
load). The first drill of each preset works out its chart (seconds, once a worker). Prints
the CPU of starts and answers (count, sum, p50, p90, max), then one JSON object, also
appended to bench/results/drill.jsonl (bench/record.py; its fields: docs/reference/files.md).
Same seed, same questions: an A/B sitting runs an older build with ``PYTHONPATH`` naming its
checkout.

Run: .venv/bin/python bench/drill.py [--answers N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import time


def _figures(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "n": len(xs),
        "cpu_seconds": round(sum(xs), 3),
        "p50_ms": round(1000 * xs[len(xs) // 2], 1),
        "p90_ms": round(1000 * xs[int(len(xs) * 0.9)], 1),
        "max_ms": round(1000 * xs[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answers", type=int, default=400, help="answers given in all")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from pontoon.rules import PRESETS
    from pontoon.server import train

    modes = ("all", "hard", "soft", "pairs", "weak")  # (bench/server.py's DRILL_MODES)
    rng = random.Random(args.seed)
    starts: list[float] = []
    answers: list[float] = []
    doc, drill = None, 0
    while len(answers) < args.answers:
        t = time.process_time()
        if doc is None or doc.get("question") is None:
            drill += 1
            preset, mode = rng.choice(PRESETS), rng.choice(modes)
            doc = train._begin(str(drill), preset, mode, rng.randrange(2**32), 20, [], [])
            starts.append(time.process_time() - t)
            if "error" in doc:
                doc = None
        else:
            doc = train._step(str(drill), rng.choice(doc["question"]["legal"]), [])
            answers.append(time.process_time() - t)
    began, answered = _figures(starts), _figures(answers)
    for what, f in (("starts", began), ("answers", answered)):
        print(
            f"{what}: {f['n']}, CPU {f['cpu_seconds']} s (p50 {f['p50_ms']} ms, p90 "
            f"{f['p90_ms']}, max {f['max_ms']})"
        )
    result = {
        "bench": "drill",
        "seed": args.seed,
        "answers": answered["n"],
        "answer_cpu_ms_mean": round(1000 * answered["cpu_seconds"] / answered["n"], 2),
        "answer_cpu_p50_ms": answered["p50_ms"],
        "answer_cpu_p90_ms": answered["p90_ms"],
        "answer_cpu_max_ms": answered["max_ms"],
        "starts": began["n"],
        "start_cpu_seconds": began["cpu_seconds"],
        "start_cpu_max_ms": began["max_ms"],
    }
    from record import emit  # bench/record.py, beside this file

    emit(result)


if __name__ == "__main__":
    main()
