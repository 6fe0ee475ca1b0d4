"""Monte Carlo simulation on a compiled kernel (numba): ``pontoon simulate``.

``compiled`` turns a rule set and a chart into the kernel's arrays, ``kernel`` plays the rounds,
``job``/``runner`` cut the work into seeded chunks for this process, local processes or Dask,
``results`` makes the JSON document, ``counting`` reads counting systems, and ``reference``
plays the kernel's shoes through the round engine for the equivalence test. See
docs/analysts/simulate.md.
"""
