# The types of the compiled loops in _compiled.pyx (Cython), for mypy.
import numpy as np
import numpy.typing as npt

def dealer_trie(
    value: npt.NDArray[np.int64],
    before: npt.NDArray[np.int64],
    cards: npt.NDArray[np.int64],
    parent: npt.NDArray[np.int64],
    draw: npt.NDArray[np.int64],
    sum_row: npt.NDArray[np.int64],
    sum_outcome: npt.NDArray[np.int64],
    sum_end: npt.NDArray[np.int64],
    entry_node: npt.NDArray[np.int64],
    entry_weight: npt.NDArray[np.float64],
    shoes: npt.NDArray[np.float64],
    infinite: bool,
    first_card: bool,
    bust: int,
    out: npt.NDArray[np.float64],
) -> None: ...
def add_endings(
    flat: npt.NDArray[np.int64],
    mass: npt.NDArray[np.float64],
    tab: npt.NDArray[np.float64],
    joint: npt.NDArray[np.float64],
) -> None: ...
def walk_sums(
    tab: npt.NDArray[np.float64],
    coef1: npt.NDArray[np.float64],
    coef2: npt.NDArray[np.float64],
    idx: npt.NDArray[np.int64],
    nxt: npt.NDArray[np.float64],
    arrive: npt.NDArray[np.float64],
    kids: npt.NDArray[np.int64],
    stand1: npt.NDArray[np.float64],
    stand2: npt.NDArray[np.float64],
    came: npt.NDArray[np.float64],
    busted: npt.NDArray[np.float64],
) -> None: ...
