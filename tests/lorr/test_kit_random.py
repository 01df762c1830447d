"""The kit's random numbers, drawn as GCC's C++ library draws them: every generator and
distribution against reference draws made by the real library (g++ 12, the compiler the kit's
reference runs were built with; `data/kit_random_reference.cpp` made
`data/kit_random_reference.json`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fleetsim.lorr import kit_random as kr
from fleetsim.lorr.delays import lround

REFERENCE = json.loads((Path(__file__).parent / "data" / "kit_random_reference.json").read_text())


def test_the_engine_gives_the_standards_10000th_word_and_the_librarys_words() -> None:
    g = kr.MT19937()
    for _ in range(9999):
        g()
    assert g() == REFERENCE["default_10000th"] == 4123659995  # (the C++ standard's check)
    h = kr.MT19937(7)
    assert [h() for _ in range(1300)] == REFERENCE["words_seed7"]  # (past two twists)
    legacy = np.random.RandomState(7).randint(0, 2**32, 1300, dtype=np.uint64)  # NumPy's MT
    assert REFERENCE["words_seed7"] == legacy.tolist()


def test_canonical_bernoulli_uniform_normal_and_poisson_draw_as_the_library() -> None:
    g = kr.MT19937(11)
    assert [kr.canonical(g) for _ in range(200)] == REFERENCE["canonical_seed11"]
    g = kr.MT19937(12)
    assert [int(kr.bernoulli(g, 0.3)) for _ in range(300)] == REFERENCE["bernoulli_seed12_p0.3"]
    g = kr.MT19937(13)
    assert [[a, b, kr.uniform_int(g, a, b)] for a, b, _ in REFERENCE["uniform_seed13"]] == (
        REFERENCE["uniform_seed13"]
    )
    g = kr.MT19937(14)
    assert [kr.normal(g, 20.0, 4.4) for _ in range(200)] == REFERENCE["normal_seed14_mean20_sd4.4"]
    g = kr.MT19937(15)
    assert [[m, kr.poisson(g, m)] for m, _ in REFERENCE["poisson_seed15"]] == (
        REFERENCE["poisson_seed15"]
    )


def test_shuffle_swaps_as_the_library_in_pairs_and_one_by_one() -> None:
    """Sizes of both parities take the two-at-a-time path; 70,000 items (too many for two
    positions a 32-bit word) take one draw a swap."""
    g = kr.MT19937(16)
    sizes = [1, 2, 3, 4, 5, 17, 40, 151, 400, 70000]  # (as the reference program shuffles)
    for n, expected in zip(sizes, REFERENCE["shuffle_seed16"], strict=True):
        items = list(range(n))
        kr.shuffle(g, items)
        assert items[: len(expected)] == expected, n


def test_lround_rounds_halves_away_from_zero_as_c() -> None:
    assert [[x, lround(x)] for x, _ in REFERENCE["lround"]] == REFERENCE["lround"]


def test_out_of_reach_requests_are_refused() -> None:
    g = kr.MT19937(1)
    with pytest.raises(ValueError, match="only means below 12"):
        kr.poisson(g, 12.5)
    with pytest.raises(ValueError, match="wider than the generator"):
        kr.uniform_int(g, 0, 2**33)
