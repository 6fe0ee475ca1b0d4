# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The analysis's compiled loops (Cython, built when the package is installed; callers find
them through :mod:`pontoon.analysis.compiled`, and without a C compiler the numpy code beside
each call does the same work).

``dealer_trie``: :func:`pontoon.analysis.dealer._evaluate` four shoes at a time. Numpy walks
the trie a depth at a time for a block of shoes (each node's values for every shoe of the
block, gathered from its parent's: memory-bound); here the shoes' draw factors and their
1,889 node values stay in the first-level cache, and each hand's weighted value goes straight
into the seven outcomes. A draw's factor multiplies by ``1 / (N - j)`` where numpy divides
by ``N - j``, and the sums over hands go in another order (numpy's matrix product): the
results differ from numpy's by a few roundings (the tests hold them to 1e-14).
``walk_sums`` and ``walk_choose``: a step of the backward walk (what standing and each card
bring; then each action's value, the choice and the values of arriving); ``forward_step``: a
step of the forward pass (every ending its hands record and every card's flow to the next
hands); ``add_endings``: the forward pass's record of a few endings (a pattern node's). Each
reads and writes in place what numpy gathers into copies first.
"""

from libc.stdint cimport int64_t
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

cdef extern from *:
    """
    /* Four shoes side by side as one value of GCC's (and clang's) vector type: the compiler
       makes each operation on it one or two vector instructions. Unaligned: malloc's. Each
       helper is compiled twice, for x86-64-v3 (AVX2, FMA) and for any x86-64, and the
       loader picks the one the processor runs (target_clones; elsewhere, the plain build). */
    typedef double lanes4 __attribute__((vector_size(32), aligned(8)));
    #if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    #define CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
    #else
    #define CLONES
    #endif

    /* v[k] = v[parent[k]] * factor[draw[k]] for every node after the root. */
    CLONES static void walk_nodes(const int64_t *parent, const int64_t *draw, Py_ssize_t nodes,
                           double *v, const double *factor) {
        lanes4 *restrict vv = (lanes4 *) v;
        const lanes4 *restrict ff = (const lanes4 *) factor;
        for (Py_ssize_t k = 1; k < nodes; k++) vv[k] = vv[parent[k]] * ff[draw[k]];
    }

    /* sum of weight[e] * v[node[e]] for the entries lo <= e < hi, into out (four lanes). */
    CLONES static void sum_entries(const int64_t *node, const double *weight, Py_ssize_t lo,
                            Py_ssize_t hi, const double *v, double *out) {
        const lanes4 *vv = (const lanes4 *) v;
        lanes4 a = {0.0, 0.0, 0.0, 0.0}, b = a, c = a, d = a;  /* four chains of adds */
        Py_ssize_t e = lo;
        for (; e + 4 <= hi; e += 4) {
            a += weight[e] * vv[node[e]];
            b += weight[e + 1] * vv[node[e + 1]];
            c += weight[e + 2] * vv[node[e + 2]];
            d += weight[e + 3] * vv[node[e + 3]];
        }
        for (; e < hi; e++) a += weight[e] * vv[node[e]];
        a = (a + b) + (c + d);
        for (int l = 0; l < 4; l++) out[l] = a[l];
    }
    """
    void walk_nodes(const int64_t *parent, const int64_t *draw, Py_ssize_t nodes,
                    double *v, const double *factor) noexcept nogil
    void sum_entries(const int64_t *node, const double *weight, Py_ssize_t lo,
                     Py_ssize_t hi, const double *v, double *out) noexcept nogil

cdef enum:
    LANES = 4  # shoes walked side by side (one vector of the C helpers above)
    UPS = 10  # the dealer's first cards (and the cards' values)
    CHANNELS = 4  # the backward walk's arrivals (pontoon.analysis.walk.ARR1...)
    ARR1 = 0
    ARR2 = 1
    SARR1 = 2
    SARR2 = 3
    NATURAL = 6  # the dealer's pontoon, an outcome (pontoon.analysis.dealer.NATURAL)
    OUTCOMES = 7  # the dealer's outcomes
    CELLS = 70  # a context's (up, outcome) cells of one ending
    STAND = 0  # the action columns (pontoon.analysis.values)
    HIT = 1
    DOUBLE = 2
    SURRENDER = 3


def dealer_trie(
    const int64_t[::1] value,
    const int64_t[::1] before,
    const int64_t[::1] cards,
    const int64_t[::1] parent,
    const int64_t[::1] draw,
    const int64_t[::1] sum_row,
    const int64_t[::1] sum_outcome,
    const int64_t[::1] sum_end,
    const int64_t[::1] entry_node,
    const double[::1] entry_weight,
    const double[:, ::1] shoes,
    bint infinite,
    bint first_card,
    Py_ssize_t bust,
    double[:, :, ::1] out,
):
    """Fill ``out`` (shoes, rows, outcomes; 0 where no sum is) with the trie's
    hands summed for each shoe (counts by value, or probabilities): the arrays of
    :class:`~pontoon.analysis.dealer._Trie` (draws, then nodes), then its weights as sums:
    sum ``t`` goes to ``out[:, sum_row[t], sum_outcome[t]]`` and adds the entries from the
    previous sum's end to ``sum_end[t]``, each a hand's node and its weight. Then, with
    ``first_card``, row ``r`` is divided by the probability of the first card ``r`` (where
    the shoe holds one); column ``bust`` is what the other outcomes leave of 1."""
    cdef Py_ssize_t n_shoes = shoes.shape[0]
    cdef Py_ssize_t n_values = shoes.shape[1]
    cdef Py_ssize_t n_draws = value.shape[0]
    cdef Py_ssize_t n_nodes = parent.shape[0]
    cdef Py_ssize_t n_sums = sum_end.shape[0]
    cdef Py_ssize_t g, l, d, i, j, k, t, lo, hi, n_rec = 1
    cdef double num, x
    cdef double total[LANES]
    cdef Py_ssize_t lane[LANES]
    cdef double f[LANES]
    cdef double a0[LANES]
    for d in range(n_draws):
        n_rec = max(n_rec, before[d] + cards[d])
    # LANES shoes at a time, side by side: every array below holds LANES values an entry
    cdef double *factor = <double *> malloc(n_draws * LANES * sizeof(double))
    cdef double *v = <double *> malloc(n_nodes * LANES * sizeof(double))
    cdef double *rec = <double *> malloc(n_rec * LANES * sizeof(double))
    if factor == NULL or v == NULL or rec == NULL:
        free(factor)
        free(v)
        free(rec)
        raise MemoryError()
    try:
        with nogil:
            g = 0
            while g < n_shoes:
                for l in range(LANES):  # (past the last shoe: the last shoe again)
                    lane[l] = min(g + l, n_shoes - 1)
                    total[l] = 0.0
                    for i in range(n_values):
                        total[l] = total[l] + shoes[lane[l], i]
                    for j in range(n_rec):  # 1 / (cards left after j drawn); 0: too few
                        x = total[l] - j
                        rec[j * LANES + l] = 1.0 if infinite else (1.0 / x if x > 0.0 else 0.0)
                for d in range(n_draws):  # the lanes innermost: independent products
                    for l in range(LANES):
                        f[l] = 1.0
                    for i in range(cards[d]):
                        j = (before[d] + i) * LANES
                        for l in range(LANES):
                            num = shoes[lane[l], value[d]]
                            if not infinite:
                                num = num - i
                            f[l] = f[l] * (num if num > 0.0 else 0.0) * rec[j + l]
                    for l in range(LANES):
                        factor[d * LANES + l] = f[l]
                for l in range(LANES):
                    v[l] = 1.0
                walk_nodes(&parent[0], &draw[0], n_nodes, v, factor)
                for l in range(LANES):
                    if g + l < n_shoes:
                        out[g + l, :, :] = 0.0
                lo = 0
                for t in range(n_sums):
                    hi = sum_end[t]
                    sum_entries(&entry_node[0], &entry_weight[0], lo, hi, v, a0)
                    for l in range(LANES):
                        if g + l < n_shoes:
                            out[g + l, sum_row[t], sum_outcome[t]] = a0[l]
                    lo = hi
                for l in range(LANES):
                    if g + l < n_shoes:
                        finish(shoes, g + l, infinite, first_card, bust, total[l], out)
                g = g + LANES
    finally:
        free(factor)
        free(v)
        free(rec)


cdef inline void finish(
    const double[:, ::1] shoes,
    Py_ssize_t s,
    bint infinite,
    bint first_card,
    Py_ssize_t bust,
    double total,
    double[:, :, ::1] out,
) noexcept nogil:
    """Shoe ``s``'s rows divided by their first card's probability (``first_card``), and
    the bust column."""
    cdef Py_ssize_t r, o
    cdef double p, rest
    for r in range(out.shape[1]):
        if first_card:
            p = shoes[s, r] if infinite else shoes[s, r] / total
            if p > 0.0:
                for o in range(out.shape[2]):
                    out[s, r, o] = out[s, r, o] / p
        rest = 0.0
        for o in range(out.shape[2]):
            if o != bust:
                rest = rest + out[s, r, o]
        out[s, r, bust] = 1.0 - rest


def add_endings(
    const int64_t[:, :, ::1] flat,
    const double[:, :, ::1] mass,
    const double[:, :, ::1] tab,
    double[:, ::1] joint,
):
    """``joint[ch, flat[i, u, o]] += mass[i, u, ch] * tab[i, u, o]`` for every entry and
    channel: :meth:`pontoon.analysis.reach.Forward.emit`'s weighted count, added in place
    (numpy counts a call's entries into a fresh array of the whole joint, then adds it)."""
    cdef Py_ssize_t i, u, o, ch, at
    cdef Py_ssize_t channels = mass.shape[2]
    cdef double t
    with nogil:
        for i in range(flat.shape[0]):
            for u in range(flat.shape[1]):
                for o in range(flat.shape[2]):
                    at = flat[i, u, o]
                    t = tab[i, u, o]
                    for ch in range(channels):
                        joint[ch, at] = joint[ch, at] + mass[i, u, ch] * t


def walk_sums(
    const double[:, :, ::1] tab,
    const double[:, ::1] coef1,
    const double[:, ::1] coef2,
    const int64_t[::1] idx,
    const double[:, ::1] left,
    bint infinite,
    bint peek,
    const double[:, ::1] arrive_f,
    const double[:, :, ::1] arrive,
    const int64_t[:, ::1] kids,
    double[:, ::1] stand1,
    double[:, ::1] stand2,
    double[:, :, ::1] came,
    double[:, ::1] lost,
):
    """A step of :class:`pontoon.analysis.walk._Walk` for rows ``k``, up cards ``u``:
    ``stand[k, u] = sum_o tab[k, u, o] * coef[idx[k], o]`` (both stakes); and where the
    hand may draw (``kids`` given, else ``came`` and ``lost`` are left alone), with the next
    card's chances ``p[c]`` from the cards ``left[k]`` less the dealer's first
    (:meth:`pontoon.analysis.game.Game.offer`): ``came[k, x, u] = sum_c p[c] *
    arrive[kids[k, c], x, u]`` (``kids[k, c] < 0``: card ``c`` busts the hand) and
    ``lost[k, u]`` the wager lost to a busting card: its chance times ``arrive_f[k, u]``
    (the weight of a settlement now), or, in the ``peek`` game against a first ace or ten,
    each busting card's chance times that of no dealer pontoon once it is drawn
    (:meth:`pontoon.analysis.game.Game.naturals_after_draw`). Numpy gathers
    ``arrive[kids]`` (k, 10, 4, 10) to do the same."""
    cdef Py_ssize_t k, u, o, c, x, kid
    cdef Py_ssize_t ups = tab.shape[1], outcomes = tab.shape[2], channels = arrive.shape[1]
    cdef double s1, s2, ace, ten
    cdef double size[UPS]
    cdef double rem[UPS][UPS]  # [u][c]: the cards left once first card u is out
    cdef double p[UPS][UPS]  # [c][u]: the next card's chances
    cdef double b[UPS]
    cdef double acc[CHANNELS][UPS]
    cdef bint draws = kids.shape[0] > 0
    cdef bint naturals = peek and not infinite
    if ups != UPS or channels > CHANNELS:
        raise ValueError("ten first cards and at most four channels")
    with nogil:
        for k in range(tab.shape[0]):
            for u in range(UPS):
                s1 = 0.0
                s2 = 0.0
                for o in range(outcomes):
                    s1 = s1 + tab[k, u, o] * coef1[idx[k], o]
                    s2 = s2 + tab[k, u, o] * coef2[idx[k], o]
                stand1[k, u] = s1
                stand2[k, u] = s2
            if not draws:
                continue
            for u in range(UPS):
                size[u] = cards_left(&left[k, 0], u, infinite, rem[u])
                for c in range(UPS):
                    p[c][u] = rem[u][c] / size[u] if size[u] > 0.0 else 0.0
                b[u] = 0.0
                for x in range(channels):
                    acc[x][u] = 0.0
            ace = 0.0  # the peek game: a busting card with no dealer pontoon after it
            ten = 0.0
            for c in range(UPS):  # each card, against every first card at once
                kid = kids[k, c]
                if kid >= 0:
                    for x in range(channels):
                        for u in range(UPS):
                            acc[x][u] = acc[x][u] + p[c][u] * arrive[kid, x, u]
                    continue
                for u in range(UPS):
                    b[u] = b[u] + p[c][u]
                if naturals:
                    ace = ace + p[c][0] * no_pontoon(rem[0], size[0], UPS - 1, c)
                    ten = ten + p[c][UPS - 1] * no_pontoon(rem[UPS - 1], size[UPS - 1], 0, c)
            for u in range(UPS):
                for x in range(channels):
                    came[k, x, u] = acc[x][u]
                lost[k, u] = b[u] * arrive_f[k, u]
            if naturals:
                lost[k, 0] = ace
                lost[k, UPS - 1] = ten


cdef inline double cards_left(
    const double *left, Py_ssize_t up, bint infinite, double *rem
) noexcept nogil:
    """``rem``: the cards ``left`` (by value) once first card ``up`` is out of a finite shoe
    (none below 0); returns how many (:meth:`pontoon.analysis.game.Game.offer`'s numbers)."""
    cdef double size = 0.0, r
    cdef Py_ssize_t c
    for c in range(UPS):
        r = left[c] - (1.0 if c == up and not infinite else 0.0)
        rem[c] = r if r > 0.0 else 0.0
        size = size + rem[c]
    return size


cdef inline double no_pontoon(
    const double *rem, double size, Py_ssize_t nat, Py_ssize_t drawn
) noexcept nogil:
    """The chance that the dealer's second card is not ``nat`` (a first ace's ten, a first
    ten's ace) once card ``drawn`` is out of the ``size`` cards ``rem``; 1 where none is."""
    if size <= 1.0:
        return 1.0
    return 1.0 - (rem[nat] - (1.0 if drawn == nat else 0.0)) / (size - 1.0)


def forward_step(
    const int64_t[::1] rows,
    const int64_t[::1] ctx,
    const double[:, :, ::1] tab,
    const double[:, ::1] left,
    bint infinite,
    const int64_t[:, ::1] choice,
    const int64_t[::1] node,
    const double[:, :, :, ::1] masses,
    const int64_t[:, ::1] kidrow,
    const int64_t[:, ::1] ev_stand,
    const int64_t[:, ::1] ev_double,
    const unsigned char[:, ::1] rescued,
    const int64_t[::1] ev_surrender,
    int64_t bust1,
    int64_t bust2,
    int64_t rescue,
    Py_ssize_t cells,
    double[:, :, ::1] hit_in,
    double[:, :, ::1] by_hit,
    double[:, :, ::1] dbl_in,
    double[:, :, ::1] by_dbl,
    double[:, ::1] joint,
):
    """A step of :class:`pontoon.analysis.reach.Forward` for hands ``k`` (rows ``rows[k]`` of
    the flow arrays ``hit_in``, ``by_hit``, ``dbl_in``, ``by_dbl``, context ``ctx[k]``)
    against first cards ``u``, ``joint[ch, e * cells + ctx * 70 + u * 7 + o]`` recording
    each ending ``e``'s mass times the dealer's table ``tab[k, u, o]``: the children's share
    of a bust taken back (``by_hit``, ``by_dbl``); the doubled hands arriving, settled
    (``ev_double``, or ``rescue`` where ``rescued``); the hands arriving by a hit playing
    ``choice[k, u]`` (or, a pattern node, as ``masses[node[k], u, action]`` share them):
    standing (``ev_stand``), surrendering (``ev_surrender``), or hitting or doubling, all of
    it recorded as a bust where a card may bust the hand (``kidrow[k, c] == -1``), and each
    child's share (``kidrow[k, c] >= 0``) flowing on to its row, to be taken back there
    (``kidrow[k, c] == -2``: settled elsewhere). The next card comes from the cards
    ``left[k]`` less the dealer's first (:meth:`pontoon.analysis.game.Game.offer`)."""
    cdef Py_ssize_t k, u, o, ch, c, r, at, kid, a
    cdef Py_ssize_t channels = joint.shape[0]
    cdef double t, size, m
    cdef bint busts, live
    cdef double nxt[UPS]
    cdef double mass[4][2]
    if channels > 2:
        raise ValueError("at most two channels")
    with nogil:
        for k in range(rows.shape[0]):
            r = rows[k]
            for u in range(UPS):
                live = False
                for ch in range(channels):
                    live = live or hit_in[r, u, ch] != 0.0 or by_hit[r, u, ch] != 0.0
                    live = live or dbl_in[r, u, ch] != 0.0 or by_dbl[r, u, ch] != 0.0
                if not live:
                    continue
                at = ctx[k] * CELLS + u * OUTCOMES
                for a in range(4):
                    for ch in range(channels):
                        if node[k] >= 0:
                            mass[a][ch] = masses[node[k], u, a, ch]
                        else:
                            mass[a][ch] = hit_in[r, u, ch] if choice[k, u] == a else 0.0
                for o in range(OUTCOMES):
                    t = tab[k, u, o]
                    for ch in range(channels):
                        joint[ch, bust1 * cells + at + o] -= by_hit[r, u, ch] * t
                        joint[ch, bust2 * cells + at + o] -= by_dbl[r, u, ch] * t
                        joint[ch, (rescue if rescued[k, u] else ev_double[k, o]) * cells + at + o] += (
                            dbl_in[r, u, ch] * t
                        )
                        joint[ch, ev_stand[k, o] * cells + at + o] += mass[STAND][ch] * t
                        joint[ch, ev_surrender[o] * cells + at + o] += mass[SURRENDER][ch] * t
                m = 0.0
                for ch in range(channels):
                    m = m + mass[HIT][ch] + mass[DOUBLE][ch]
                if m == 0.0:
                    continue
                size = cards_left(&left[k, 0], u, infinite, nxt)  # the next card's chances:
                busts = False
                for c in range(UPS):
                    nxt[c] = nxt[c] / size if size > 0.0 else 0.0
                    busts = busts or (kidrow[k, c] == -1 and nxt[c] > 0.0)
                if busts:
                    for o in range(OUTCOMES):
                        t = tab[k, u, o]
                        for ch in range(channels):
                            joint[ch, bust1 * cells + at + o] += mass[HIT][ch] * t
                            joint[ch, bust2 * cells + at + o] += mass[DOUBLE][ch] * t
                for c in range(UPS):
                    kid = kidrow[k, c]
                    if kid < 0:
                        continue
                    for ch in range(channels):
                        hit_in[kid, u, ch] += mass[HIT][ch] * nxt[c]
                        dbl_in[kid, u, ch] += mass[DOUBLE][ch] * nxt[c]
                        if busts:
                            by_hit[kid, u, ch] += mass[HIT][ch] * nxt[c]
                            by_dbl[kid, u, ch] += mass[DOUBLE][ch] * nxt[c]


def walk_choose(
    const int64_t[::1] rows,
    const int64_t[::1] idx,
    const double[:, :, ::1] tab,
    const double[:, ::1] arrive_f,
    const double[:, ::1] stand1,
    const double[:, ::1] stand2,
    const double[:, :, ::1] came,
    const double[:, ::1] lost,
    bint draws,
    const int64_t[::1] node_of,
    const double[:, :, ::1] prem,
    const unsigned char[:, :, ::1] legal,
    const double[:, :, ::1] scores,
    int surrender,
    double loss,
    bint at21,
    bint paid21,
    const double[::1] win1,
    const double[::1] win2,
    int rescue,
    const unsigned char[::1] rescue_row,
    double[:, :, ::1] act,
    int64_t[:, ::1] choice,
    double[:, ::1] node,
    double[:, :, ::1] arrive,
    unsigned char[:, ::1] rescued,
):
    """The rest of a step of :class:`pontoon.analysis.walk._Walk` (its numpy twin is the
    step's own code, which reads as this does) for rows ``rows[k]`` (compositions
    ``idx[k]``), from :func:`walk_sums`' results: each action's value (stand, hit, double,
    surrender: ``surrender`` 0 the plain loss, 1 the peek game's, 2 void on a dealer
    pontoon, 9.4; a pattern node's premiums ``prem[node_of[k]]`` added to a hit and a
    double), the legal one with the best value (or the best of ``scores[idx[k]]``, where
    given) chosen, and the values of arriving at the row: by a hit, the choice's; by a
    double, standing's (or the rescue's, 12: ``rescue`` 1 where better, 2 where
    ``rescue_row`` says); at 21 standing's, or (``paid21``, 9.2) the 21's pay at once."""
    cdef Py_ssize_t k, u, a, r, pick
    cdef double best, key, pn, f, forfeit
    cdef double val[4]
    cdef double sval[4]
    cdef bint better
    cdef bint scored = scores.shape[0] > 0
    with nogil:
        for k in range(rows.shape[0]):
            r = rows[k]
            for u in range(UPS):
                pn = tab[k, u, NATURAL]
                f = arrive_f[k, u]
                val[STAND] = stand1[k, u]
                sval[STAND] = pn
                if draws:
                    val[HIT] = came[k, ARR1, u] - lost[k, u]
                    val[DOUBLE] = came[k, ARR2, u] - 2.0 * lost[k, u]
                    sval[HIT] = came[k, SARR1, u]
                    sval[DOUBLE] = came[k, SARR2, u]
                else:
                    val[HIT] = -INFINITY
                    val[DOUBLE] = -INFINITY
                    sval[HIT] = 0.0
                    sval[DOUBLE] = 0.0
                if surrender == 1:
                    val[SURRENDER] = -loss * (1.0 - pn)
                elif surrender == 2:
                    val[SURRENDER] = -pn - (1.0 - pn) * loss
                else:
                    val[SURRENDER] = -loss
                sval[SURRENDER] = 0.0
                if node_of[k] >= 0:
                    val[HIT] += prem[node_of[k], u, 0]
                    val[DOUBLE] += prem[node_of[k], u, 1]
                pick = 0
                best = -INFINITY
                for a in range(4):
                    act[r, u, a] = val[a] if legal[r, u, a] else -INFINITY
                    key = scores[idx[k], u, a] if scored else val[a]
                    if legal[r, u, a] and key > best:
                        best = key
                        pick = a
                choice[r, u] = pick
                node[r, u] = val[pick]
                if at21 and paid21:
                    arrive[r, ARR1, u] = win1[idx[k]] * f
                    arrive[r, ARR2, u] = win2[idx[k]] * f
                    continue
                arrive[r, ARR1, u] = stand1[k, u] if at21 else val[pick]
                arrive[r, SARR1, u] = pn if at21 else sval[pick]
                arrive[r, ARR2, u] = stand2[k, u]
                arrive[r, SARR2, u] = pn
                if at21 or rescue == 0:
                    continue
                forfeit = -f
                better = forfeit > stand2[k, u] if rescue == 1 else rescue_row[u] != 0
                if better:
                    arrive[r, ARR2, u] = forfeit
                    arrive[r, SARR2, u] = 0.0
                rescued[r, u] = better
