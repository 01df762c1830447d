"""The random numbers of the LoRR start kit, drawn as its C++ build draws them: the 32-bit
Mersenne Twister (`std::mt19937`) and the GNU C++ library's distributions over it, so that the
same seed gives the same delays as the kit (`fleetsim.lorr.delays`).

Written from the algorithms' published descriptions (Matsumoto and Nishimura's generator; the
distributions as the kit's reference notes in `../shared/lorr/README.md` describe GCC 11's):

- `canonical`: a double in [0, 1) from two 32-bit words, (g1 + g2 * 2^32) / 2^64 (the largest
  double below 1 if that rounds to 1);
- `uniform_int`: Lemire's multiply-and-reject on 64-bit products of one 32-bit word;
- `normal`: Marsaglia's polar method, the first of its two values kept (a fresh distribution
  per draw throws the spare away);
- `poisson` (mean below 12): the count of canonicals multiplied before the product drops to
  e^-mean or below;
- `shuffle`: Fisher-Yates, two swap positions at a time from one `uniform_int` over the
  product of the two ranges while that product fits a word.

A build of the kit against another C++ library (libc++, MSVC) draws differently.
"""

from __future__ import annotations

import math
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")

_N, _M = 624, 397
_UPPER, _LOWER = 0x80000000, 0x7FFFFFFF
_MATRIX = 0x9908B0DF
_WORD = 0xFFFFFFFF


class MT19937:
    """`std::mt19937(seed)`: 32-bit words in the C++ library's order."""

    def __init__(self, seed: int = 5489) -> None:
        state = [seed & _WORD]
        for i in range(1, _N):
            previous = state[-1]
            state.append((1812433253 * (previous ^ (previous >> 30)) + i) & _WORD)
        self._state = state
        self._index = _N

    def _twist(self) -> None:
        s = self._state
        for i in range(_N):
            y = (s[i] & _UPPER) | (s[(i + 1) % _N] & _LOWER)
            s[i] = s[(i + _M) % _N] ^ (y >> 1) ^ (_MATRIX if y & 1 else 0)
        self._index = 0

    def __call__(self) -> int:
        """The next 32-bit word."""
        if self._index >= _N:
            self._twist()
        y = self._state[self._index]
        self._index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)


def canonical(g: MT19937) -> float:
    """`std::generate_canonical<double, 53>`: a double in [0, 1) from two words."""
    value = (g() + g() * 4294967296.0) / 18446744073709551616.0
    return value if value < 1.0 else math.nextafter(1.0, 0.0)


def bernoulli(g: MT19937, p: float) -> bool:
    """`std::bernoulli_distribution(p)`."""
    return canonical(g) < p


def uniform_int(g: MT19937, low: int, high: int) -> int:
    """`std::uniform_int_distribution<>(low, high)` (high - low below 2^32 - 1)."""
    span = high - low
    if span >= _WORD:
        if span == _WORD:
            return low + g()
        raise ValueError(f"a range of {span + 1} values is wider than the generator's words")
    size = span + 1  # Lemire: the high word of word * size, a low word too small rejected
    product = g() * size
    if (product & _WORD) < size:
        threshold = ((1 << 32) - size) % size
        while (product & _WORD) < threshold:
            product = g() * size
    return low + (product >> 32)


def normal(g: MT19937, mean: float, stddev: float) -> float:
    """`std::normal_distribution(mean, stddev)`, drawn once by a fresh distribution."""
    while True:
        x = 2.0 * canonical(g) - 1.0
        y = 2.0 * canonical(g) - 1.0
        r2 = x * x + y * y
        if r2 <= 1.0 and r2 != 0.0:
            break
    return y * math.sqrt(-2.0 * math.log(r2) / r2) * stddev + mean


def poisson(g: MT19937, mean: float) -> int:
    """`std::poisson_distribution(mean)` for a mean below 12 (the product method)."""
    if not 0.0 <= mean < 12.0:
        raise ValueError(f"Poisson mean {mean}: only means below 12 are drawn as the kit does")
    limit, product, count = math.exp(-mean), 1.0, 0
    while True:
        product *= canonical(g)
        count += 1
        if not product > limit:
            return count - 1


def shuffle(g: MT19937, items: MutableSequence[T]) -> None:
    """`std::shuffle(items, g)` in place."""
    n = len(items)
    if n < 2:
        return
    if _WORD // n < n:  # too many for two positions a word: one position a draw
        for i in range(1, n):
            k = uniform_int(g, 0, i)
            items[i], items[k] = items[k], items[i]
        return
    i = 1
    if n % 2 == 0:  # an odd number of swaps: the first one alone
        k = uniform_int(g, 0, 1)
        items[i], items[k] = items[k], items[i]
        i += 1
    while i < n:  # the rest two at a time: positions for i and i + 1 from one draw
        first, second = i + 1, i + 2
        both = uniform_int(g, 0, first * second - 1)
        a, b = both // second, both % second
        items[i], items[a] = items[a], items[i]
        items[i + 1], items[b] = items[b], items[i + 1]
        i += 2
