"""The C++ draws, as GCC's C++ library makes them: the engine and every distribution against
reference draws made by the real library (g++ 12, the compiler the LoRR kit's reference runs
were built with; `data/kit_random_reference.cpp` made `data/kit_random_reference.json`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fleetsim.faults.stdrandom import StdRandom, lround

REFERENCE = json.loads((Path(__file__).parent / "data" / "kit_random_reference.json").read_text())


def test_the_engine_gives_the_standards_10000th_word_and_the_librarys_words() -> None:
    g = StdRandom(5489)
    for _ in range(9999):
        g.raw()
    assert g.raw() == REFERENCE["default_10000th"] == 4123659995  # (the C++ standard's check)
    h = StdRandom(7)
    assert [h.raw() for _ in range(1300)] == REFERENCE["words_seed7"]  # (past two twists)


def test_canonical_bernoulli_uniform_normal_and_poisson_draw_as_the_library() -> None:
    g = StdRandom(11)
    assert [g.canonical() for _ in range(200)] == REFERENCE["canonical_seed11"]
    g = StdRandom(11)
    assert g.canonicals(200).tolist() == REFERENCE["canonical_seed11"]
    g = StdRandom(12)
    assert [int(g.bernoulli(0.3)) for _ in range(300)] == REFERENCE["bernoulli_seed12_p0.3"]
    g = StdRandom(13)
    assert [[a, b, g.uniform_int(a, b)] for a, b, _ in REFERENCE["uniform_seed13"]] == (
        REFERENCE["uniform_seed13"]
    )
    g = StdRandom(14)
    assert [g.normal(20.0, 4.4) for _ in range(200)] == REFERENCE["normal_seed14_mean20_sd4.4"]
    g = StdRandom(15)
    assert [[m, g.poisson(m)] for m, _ in REFERENCE["poisson_seed15"]] == (
        REFERENCE["poisson_seed15"]
    )


def test_poisson_means_of_12_and_more_draw_as_the_library() -> None:
    """The rejection method, from 12 to 10,000: every draw and the words used (a fresh
    distribution a draw, as the kit makes one a tick)."""
    g = StdRandom(17)
    drawn = [[m, g.poisson(m)] for m, _ in REFERENCE["poisson_large_seed17"]]
    assert drawn == REFERENCE["poisson_large_seed17"]
    assert g.raw() == REFERENCE["poisson_large_next_word"]


def test_shuffle_swaps_as_the_library_in_pairs_and_one_by_one() -> None:
    """Sizes of both parities take the two-at-a-time path; 70,000 items (too many for two
    positions a 32-bit word) take one draw a swap."""
    g = StdRandom(16)
    sizes = [1, 2, 3, 4, 5, 17, 40, 151, 400, 70000]  # (as the reference program shuffles)
    for n, expected in zip(sizes, REFERENCE["shuffle_seed16"], strict=True):
        items = list(range(n))
        g.shuffle(items)
        assert items[: len(expected)] == expected, n


def test_lround_rounds_halves_away_from_zero_as_c() -> None:
    assert [[x, lround(x)] for x, _ in REFERENCE["lround"]] == REFERENCE["lround"]


def test_out_of_reach_requests_are_refused() -> None:
    g = StdRandom(1)
    with pytest.raises(ValueError, match="mean from 0 to under 2"):
        g.poisson(-1.0)
    with pytest.raises(ValueError, match="ranges of 2"):
        g.uniform_int(0, 2**33)


def test_the_array_shuffle_makes_the_same_swaps() -> None:
    """The compiled shuffle (when Numba is there) of sizes small and large (60,000: rejected
    draws past the words it took at first) equals the list shuffle, and leaves the engine at
    the same word."""
    for n in (2, 3, 4, 17, 151, 10_000, 60_000):
        a, b = StdRandom(n), StdRandom(n)
        values = np.arange(n, dtype=np.int64)
        a.shuffle_array(values)
        items = list(range(n))
        b.shuffle(items)
        assert values.tolist() == items, n
        assert a.raw() == b.raw()
