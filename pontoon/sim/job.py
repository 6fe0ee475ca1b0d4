"""A simulation job: the compiled rules, chart and options, and one chunk of it run by the
kernel. A job pickles small (plain arrays), so local processes and Dask workers can run its
chunks; each chunk's result depends only on the job and the chunk's key.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final

import numpy as np

from pontoon.analysis.chart import Chart
from pontoon.errors import InputError
from pontoon.rules import RuleSet
from pontoon.sim import compiled as C
from pontoon.sim.counting import Counting

IntArray = C.IntArray
FloatArray = np.ndarray[Any, np.dtype[np.float64]]

CHUNK_ROUNDS: Final = 1 << 20  # rounds per chunk: fixed, so results do not depend on workers
SPECIALISE_ROUNDS: Final = 50_000_000  # Kernel.AUTO: a job this long gets its own kernel


class Kernel(StrEnum):
    """The machine code that plays a job (``simulate --kernel``). Both give the same results
    to the last bit; they differ only in speed and in compiling time."""

    AUTO = "auto"  # generic for a job under SPECIALISE_ROUNDS rounds, else specialised
    GENERIC = "generic"  # one kernel for every rule set: compiled once, reads the switches
    SPECIALISED = "specialised"  # the job's switches compiled in: faster, compiled per switches


NEVER = 99  # insure_at: a true count no round reaches (ALWAYS: one every round reaches)
ALWAYS = -99


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to play chunks (arrays compiled from the rule set and chart)."""

    rules: RuleSet
    params: IntArray
    moves: IntArray  # the chart's move in every context (kernel.decisions), per true count
    pair_moves: IntArray  # (one chart: a first axis of 1; with indices, of 21: -10..+10)
    template: IntArray
    rescues: IntArray  # 12: [chart, soft, total, up - 1], compile_chart, per chart as moves
    boxes: int = 1
    wager: int = 500
    others: bool = True
    hands_per_session: int = 0
    bankroll: int = 0
    counting: Counting | None = None
    session_bins: int = 1
    session_offset: int = 0
    tags: IntArray = field(default_factory=lambda: np.zeros(52, np.int64))
    ramp: IntArray = field(default_factory=lambda: np.ones(21, np.int64))
    kernel: Kernel = Kernel.AUTO
    boxes_by_count: IntArray | None = None  # the boxes dealt at each true count (counting)
    depth_edges: FloatArray = field(default_factory=lambda: np.zeros(0))  # (indices by depth)
    session_goal: int = 0  # cents: a session also ends when its result reaches it
    one_player: bool = False  # one player plays every box: a session is their total
    probing: bool = False  # each box's first decision a random legal play (simulated indices)
    legal: IntArray = field(default_factory=lambda: np.zeros((2, 22, 10, 5), np.int64))
    pair_legal: IntArray = field(default_factory=lambda: np.zeros((10, 10, 5), np.int64))
    # 10: per chart (as moves), the true count from which each box insures against a dealer
    # ace (NEVER: not at all; ALWAYS: at every count)
    insure_at: IntArray = field(default_factory=lambda: np.full(1, NEVER, np.int64))

    @classmethod
    def build(
        cls,
        rules: RuleSet,
        chart: Chart,
        *,
        boxes: int = 1,
        wager: int = 500,
        others: bool = True,
        hands_per_session: int = 0,
        bankroll: int = 0,
        counting: Counting | None = None,
        indices: Sequence[Chart] = (),
        index_depths: Sequence[float] = (),
        kernel: Kernel = Kernel.AUTO,
        boxes_by_count: Sequence[int] = (),
        session_goal: int = 0,
        one_player: bool = False,
        probing: bool = False,
        insure_from: int | Sequence[int | None] | None = None,
    ) -> Job:
        """``indices``: the chart to play at each true count from -10 to +10 (an index chart,
        :func:`pontoon.count.indices.index_charts`), for play with ``counting``; the true
        count of the deal decides the round's plays; with ``index_depths`` (the parts of the
        shoe left, largest first), ``indices`` holds those 21 charts for each depth in turn,
        and the depth nearest the deal's decides among them. ``boxes_by_count``: likewise the boxes
        dealt at each true count (at most ``boxes``; the rest of the table is empty).
        Sessions: ``hands_per_session`` rounds from ``bankroll``, or, with ``session_goal``,
        until the result reaches the goal (then ``hands_per_session`` may be 0: no length);
        a session is ruined when what is left cannot cover the next wager. ``one_player``:
        one player plays every box, and a session is their total (else each box is a
        player's). ``insure_from``: the true count from which each box takes insurance, the
        most it may (10; without ``counting`` the count is 0: 0 or less insures always), or
        one per depth of ``index_depths``; None: never (at that depth)."""
        if not 1 <= boxes <= 7:
            raise InputError(f"--boxes must be 1 to 7, not {boxes}")
        if wager < 1:
            raise InputError(f"--wager must be a positive number of cents, not {wager}")
        if hands_per_session < 0 or bankroll < 0:
            raise InputError("--hands-per-session and --bankroll must not be negative")
        if session_goal < 0:
            raise InputError(f"a session's goal must not be negative, not {session_goal}")
        if (hands_per_session or session_goal) and bankroll < wager:
            raise InputError("--hands-per-session needs --bankroll of at least one wager")
        from pontoon.sim import kernel as K

        if indices and counting is None:
            raise InputError("--indices needs --count: the true count decides the plays")
        depths = list(index_depths) or [1.0]
        if depths != sorted(depths, reverse=True) or not all(0 < d <= 1 for d in depths):
            raise InputError(f"index depths are parts of the shoe left, largest first: {depths}")
        if indices and len(indices) != K.TCBINS * len(depths):
            raise ValueError(f"an index chart per true count and depth, not {len(indices)}")
        edges = np.array([(a + b) / 2 for a, b in itertools.pairwise(depths)])
        params = C.compile_rules(rules)
        charts = list(indices) or [chart]
        compiled = [C.compile_chart(c) for c in charts]
        tables = [K.decisions(rules, *c[:2]) for c in compiled]
        rescues = np.stack([c[2] for c in compiled])
        moves = np.stack([m for m, _ in tables])
        pair_moves = np.stack([p for _, p in tables])
        if boxes_by_count and (
            counting is None
            or len(boxes_by_count) != K.TCBINS
            or not all(1 <= n <= boxes for n in boxes_by_count)
        ):
            raise InputError(f"boxes by true count need --count, {K.TCBINS} of 1 to {boxes}")
        by_count = np.array(boxes_by_count or [boxes] * K.TCBINS, np.int64)
        lo = bankroll // wager + 10
        top = session_goal // wager + 2 * K.HOFF if session_goal else 24 * hands_per_session
        bins = min(lo + top + 1, 1_000_000) if hands_per_session or session_goal else 1
        tags = np.zeros(52, np.int64)
        ramp = np.ones(21, np.int64)
        if counting is not None:
            tags, ramp = counting.tags, counting.ramp
        legal, pair_legal = K.first_decisions(rules)  # what probing draws from
        per_depth = len(indices) // len(depths) if indices else 1
        froms = (
            [insure_from] * len(depths) if not isinstance(insure_from, Sequence) else insure_from
        )
        if len(froms) != len(depths):
            raise ValueError(f"an insurance index per depth, not {len(froms)}")
        at = [NEVER if f is None else min(max(f, ALWAYS), NEVER) for f in froms]
        insure_at = np.repeat(np.array(at, np.int64), per_depth)
        return cls(
            rules,
            params,
            moves,
            pair_moves,
            C.template(rules),
            rescues,
            boxes,
            wager,
            others,
            hands_per_session,
            bankroll,
            counting,
            bins,
            lo if hands_per_session or session_goal else 0,
            tags,
            ramp,
            kernel,
            by_count,
            edges,
            session_goal,
            one_player,
            probing,
            legal,
            pair_legal,
            insure_at,
        )

    def for_rounds(self, rounds: int) -> Job:
        """The job with its kernel chosen for a run of ``rounds`` rounds: :attr:`Kernel.AUTO`
        becomes the generic kernel under :data:`SPECIALISE_ROUNDS`, where compiling a kernel
        for the rule set (about 20 s, once: numba caches it) would cost more than it saves. A
        job that insures (10) always has a kernel of its own: the generic one leaves insurance
        out, to keep its speed."""
        if (self.insure_at < NEVER).any() and self.kernel is not Kernel.SPECIALISED:
            return replace(self, kernel=Kernel.SPECIALISED)  # (10: the generic one never does)
        if self.kernel is not Kernel.AUTO:
            return self
        big = rounds >= SPECIALISE_ROUNDS
        return replace(self, kernel=Kernel.SPECIALISED if big else Kernel.GENERIC)

    def chunk_rounds(self, rounds: int) -> list[int]:
        """The rounds of each chunk: fixed-size chunks (whole sessions), the last one short."""
        size = CHUNK_ROUNDS
        if self.hands_per_session and not self.session_goal:
            size = max(1, size // self.hands_per_session) * self.hands_per_session
        full, rest = divmod(rounds, size)
        return [size] * full + ([rest] if rest else [])


@dataclass
class ChunkResult:
    """The kernel's accumulators for some chunks (added up in chunk order)."""

    acc: FloatArray
    hist: IntArray
    cats: IntArray
    sessions: IntArray
    counts: FloatArray
    probes: FloatArray  # kernel.PROBE_CELLS x 5 plays x 21 true counts x (sum, squares, n)

    def add(self, other: ChunkResult) -> None:
        self.acc += other.acc
        self.hist += other.hist
        self.cats += other.cats
        self.sessions += other.sessions
        self.counts += other.counts
        self.probes += other.probes


def run_chunk(job: Job, key: int, rounds: int, trace: bool = False) -> tuple[ChunkResult, IntArray]:
    """Play ``rounds`` rounds from a fresh shoe keyed ``key`` (and the nets of every round and
    box when ``trace``), on the job's kernel (:meth:`Job.for_rounds` of ``rounds`` if it is
    :attr:`Kernel.AUTO`)."""
    from pontoon.sim import kernel as K

    job = job.for_rounds(rounds)

    opts = np.zeros(K.NOPTS, np.int64)
    opts[K.O_OTHERS] = job.others
    opts[K.O_HANDS] = job.hands_per_session
    opts[K.O_BANKROLL] = job.bankroll
    opts[K.O_COUNTING] = job.counting is not None
    opts[K.O_TRACE] = trace
    opts[K.O_SBINS] = job.session_bins
    opts[K.O_SOFF] = job.session_offset
    opts[K.O_GOAL] = job.session_goal
    opts[K.O_ONE] = job.one_player
    opts[K.O_PROBE] = job.probing
    opts[K.O_INSURE] = bool((job.insure_at < NEVER).any())
    res = ChunkResult(
        np.zeros(K.NACC),
        np.zeros(K.HBINS, np.int64),
        np.zeros(K.NCATS, np.int64),
        np.zeros(job.session_bins, np.int64),
        np.zeros((K.TCBINS, 4)),
        np.zeros((K.PROBE_CELLS, 5, K.TCBINS, 3) if job.probing else (1, 1, 1, 3)),
    )
    nets = np.zeros((rounds if trace else 1, job.boxes), np.int64)
    spec = K.specialisation(job.params, opts, job.boxes)
    K.kernel_for(spec if job.kernel is Kernel.SPECIALISED else None)(
        np.array(spec, np.int64),
        job.params,
        job.moves,
        job.pair_moves,
        job.rescues,
        job.template,
        job.tags,
        job.ramp,
        np.full(K.TCBINS, job.boxes) if job.boxes_by_count is None else job.boxes_by_count,
        job.depth_edges,
        np.uint64(key),
        rounds,
        job.wager,
        opts,
        res.acc,
        res.hist,
        res.cats,
        res.sessions,
        res.counts,
        nets,
        job.legal,
        job.pair_legal,
        res.probes,
        job.insure_at,
    )
    return res, nets
