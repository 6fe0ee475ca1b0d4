# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The analysis's compiled loops (Cython, built when the package is installed; without a C
compiler the numpy code beside each does the same work: ``pontoon.analysis.dealer``).

``dealer_trie``: :func:`pontoon.analysis.dealer._evaluate` one shoe at a time. Numpy walks the
trie a depth at a time for a block of shoes (each node's values for every shoe of the block,
gathered from its parent's: memory-bound); here a shoe's draw factors and its 1,889 node
values stay in the first-level cache, and each hand's weighted value goes straight into the
seven outcomes. A draw's factor multiplies by ``1 / (N - j)`` where numpy divides by
``N - j``, and the sums over hands go in another order (numpy's matrix product): the
results differ from numpy's by a few roundings (the tests hold them to 1e-15).
"""

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


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
    double[:, :, ::1] out,
):
    """Fill ``out`` (shoes, rows, outcomes; left as it is where no sum is) with the trie's
    hands summed for each shoe (counts by value, or probabilities): the arrays of
    :class:`~pontoon.analysis.dealer._Trie` (draws, then nodes), then its weights as sums:
    sum ``t`` goes to ``out[:, sum_row[t], sum_outcome[t]]`` and adds the entries from the
    previous sum's end to ``sum_end[t]``, each a hand's node and its weight."""
    cdef Py_ssize_t n_shoes = shoes.shape[0]
    cdef Py_ssize_t n_values = shoes.shape[1]
    cdef Py_ssize_t n_draws = value.shape[0]
    cdef Py_ssize_t n_nodes = parent.shape[0]
    cdef Py_ssize_t n_sums = sum_end.shape[0]
    cdef Py_ssize_t s, d, i, j, k, t, lo, hi, n_rec = 1
    cdef double total, num, f, a0, a1, a2, a3
    for d in range(n_draws):
        n_rec = max(n_rec, before[d] + cards[d])
    cdef double *factor = <double *> malloc(n_draws * sizeof(double))
    cdef double *v = <double *> malloc(n_nodes * sizeof(double))
    cdef double *rec = <double *> malloc(n_rec * sizeof(double))
    if factor == NULL or v == NULL or rec == NULL:
        free(factor)
        free(v)
        free(rec)
        raise MemoryError()
    try:
        with nogil:
            for s in range(n_shoes):
                total = 0.0
                for i in range(n_values):
                    total = total + shoes[s, i]
                for j in range(n_rec):  # 1 / (cards left after j drawn); 0: too few to finish
                    rec[j] = 1.0 if infinite else (1.0 / (total - j) if total - j > 0.0 else 0.0)
                for d in range(n_draws):
                    f = 1.0
                    for i in range(cards[d]):
                        num = shoes[s, value[d]] if infinite else shoes[s, value[d]] - i
                        f = f * (num if num > 0.0 else 0.0) * rec[before[d] + i]
                    factor[d] = f
                v[0] = 1.0
                for k in range(1, n_nodes):
                    v[k] = v[parent[k]] * factor[draw[k]]
                lo = 0
                for t in range(n_sums):
                    hi = sum_end[t]
                    a0 = a1 = a2 = a3 = 0.0
                    k = lo
                    while k + 4 <= hi:
                        a0 = a0 + entry_weight[k] * v[entry_node[k]]
                        a1 = a1 + entry_weight[k + 1] * v[entry_node[k + 1]]
                        a2 = a2 + entry_weight[k + 2] * v[entry_node[k + 2]]
                        a3 = a3 + entry_weight[k + 3] * v[entry_node[k + 3]]
                        k = k + 4
                    while k < hi:
                        a0 = a0 + entry_weight[k] * v[entry_node[k]]
                        k = k + 1
                    out[s, sum_row[t], sum_outcome[t]] = (a0 + a1) + (a2 + a3)
                    lo = hi
    finally:
        free(factor)
        free(v)
        free(rec)
