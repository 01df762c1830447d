"""Random draws as a C++ program built with GCC's standard library makes them, so that a seeded
process here gives what the same process gives there (the League of Robot Runners' delays).

The engine is the Mersenne Twister `mt19937` seeded with one 32-bit number, as `std::mt19937
(seed)` is: NumPy's legacy `RandomState(seed)` is that engine with that seeding, and its full
32-bit range draws are the engine's raw outputs. The distributions are written here from the
descriptions of libstdc++'s algorithms (GCC 11 and later):

- a canonical double in [0, 1): two 32-bit outputs, (first + second * 2^32) / 2^64;
- Bernoulli(p): a canonical below p;
- uniform integers in [a, b]: Lemire's method with a 64-bit product, rejecting low parts under
  (2^32 - range) mod range;
- normal(mean, sd): Marsaglia's polar method, a fresh distribution per draw (its spare value is
  thrown away);
- Poisson(mean) for means under 12: the number of canonicals multiplied in before the product
  falls to e^-mean or below, less one; for 12 and more, Devroye's rejection method for the
  Poisson (Non-Uniform Random Variate Generation, 1986, X.3, with its errata) as the library
  sets it up (`_poisson_rejection`);
- shuffle: positions for two elements at a time from one uniform draw over [0, b(b+1) - 1],
  after a single swap up front when an odd number of swaps is needed (one position a draw
  when the sequence is too long for two to fit a 32-bit word);
- `lround`: C's rounding of halves away from zero.

Other standard libraries (libc++, MSVC) draw differently; so does NumPy's own `Generator`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from collections.abc import Callable, MutableSequence
from typing import TypeVar

import numpy as np

from fleetsim import jit

T = TypeVar("T")
TWO_32 = 2.0**32
TWO_64 = 2.0**64
BELOW_ONE = math.nextafter(1.0, 0.0)
BLOCK = 4096  # engine outputs drawn from NumPy at a time (the stream is the same)
# The rejection method's constants, as the C++ library writes them (long double literals).
SQRT_PI_2 = 1.2533141373155002512078826424055226  # sqrt(pi / 2)
PI_4 = 0.7853981633974483096156608458198757  # pi / 4
ONE_78 = 0.0128205128205128205128205128205128  # 1 / 78
E_1_78 = 1.0129030479320018583185514777512983  # e^(1 / 78)
HALF_UNDER = (1 - 2.220446049250313e-16) / 2  # just under a half: rounds x + m to the int
INT_CEILING = 2**31 - 1 + HALF_UNDER  # proposals at or past the int's largest are rejected


class StdRandom:
    """`std::mt19937(seed)` and the libstdc++ distributions fleetsim needs."""

    def __init__(self, seed: int) -> None:
        if not (isinstance(seed, int) and 0 <= seed < 2**32):
            raise ValueError(f"seed: expected a 32-bit unsigned integer, got {seed!r}")
        self._engine = np.random.RandomState(seed)
        self._block = np.empty(0, dtype=np.uint64)
        self._next = 0

    def raw(self) -> int:
        """The engine's next 32-bit output."""
        if self._next == len(self._block):
            self._refill(BLOCK)
        value = int(self._block[self._next])
        self._next += 1
        return value

    def raw_many(self, n: int) -> np.ndarray:
        """The engine's next `n` outputs, (n,) uint64, in order."""
        if self._next + n > len(self._block):
            self._refill(max(BLOCK, n))
        out = self._block[self._next : self._next + n]
        self._next += n
        return out

    def peek(self, n: int) -> np.ndarray:
        """The engine's next `n` outputs without taking them (`skip` takes them)."""
        if self._next + n > len(self._block):
            self._refill(max(BLOCK, n))
        return self._block[self._next : self._next + n]

    def skip(self, n: int) -> None:
        """Take `n` outputs seen with `peek`."""
        self._next += n

    def _refill(self, at_least: int) -> None:
        """Keep what is left of the block and draw at least `at_least` more."""
        fresh = self._engine.randint(0, 2**32, size=at_least, dtype=np.uint32)
        self._block = np.concatenate([self._block[self._next :], fresh.astype(np.uint64)])
        self._next = 0

    def canonical(self) -> float:
        """A double in [0, 1) from two outputs (`std::generate_canonical<double, 53>`)."""
        low = self.raw()
        value = (low + self.raw() * TWO_32) / TWO_64
        return value if value < 1.0 else BELOW_ONE

    def canonicals(self, n: int) -> np.ndarray:
        """The next `n` canonical doubles at once (the same as `n` calls of `canonical`)."""
        raw = self.raw_many(2 * n).astype(np.float64)
        values = (raw[0::2] + raw[1::2] * TWO_32) / TWO_64
        values[values >= 1.0] = BELOW_ONE
        return values

    def bernoulli(self, p: float) -> bool:
        """True with probability `p`."""
        return self.canonical() < p

    def uniform_int(self, a: int, b: int) -> int:
        """An integer in [a, b] (`std::uniform_int_distribution`, ranges under 2^32)."""
        span = b - a
        if span < 0:
            raise ValueError(f"uniform_int: empty range [{a}, {b}]")
        if span == 0xFFFFFFFF:
            return a + self.raw()
        if span > 0xFFFFFFFF:
            raise ValueError("uniform_int: ranges of 2^32 or more are not needed here")
        n = span + 1
        product = self.raw() * n
        low = product & 0xFFFFFFFF
        if low < n:
            threshold = (2**32 - n) % n
            while low < threshold:
                product = self.raw() * n
                low = product & 0xFFFFFFFF
        return a + (product >> 32)

    def normal(self, mean: float, sd: float) -> float:
        """A normal draw (Marsaglia's polar method; the spare value is not kept)."""
        return self._polar()[0] * sd + mean

    def _polar(self) -> tuple[float, float]:
        """Two standard normals by Marsaglia's polar method: the one the library returns first,
        and the spare it keeps."""
        while True:
            x = 2.0 * self.canonical() - 1.0
            y = 2.0 * self.canonical() - 1.0
            r2 = x * x + y * y
            if 0.0 < r2 <= 1.0:
                break
        mult = math.sqrt(-2.0 * math.log(r2) / r2)
        return y * mult, x * mult

    def poisson(self, mean: float) -> int:
        """A Poisson draw (a fresh distribution: a normal's spare value lives for one draw)."""
        if not (0 <= mean < 2**31 and math.isfinite(mean)):
            raise ValueError(f"poisson: expected a mean from 0 to under 2^31, got {mean}")
        if mean >= 12:
            return self._poisson_rejection(mean)
        threshold = math.exp(-mean)
        count, product = 0, 1.0
        while True:
            product *= self.canonical()
            count += 1
            if product <= threshold:
                return count - 1

    def _poisson_rejection(self, mean: float) -> int:
        """Devroye's rejection method for means of 12 and more: a proposal x about floor(mean)
        from one of six pieces (two normal tails scaled by sqrt(floor(mean)) and sqrt((2m + d) /
        2), the points -1, 0 and 1, and an exponential tail beyond d), accepted against the
        Poisson's log-probability ratio; lgamma is the C library's (glibc's, where there is
        one), as in the C++ build."""
        m = math.floor(mean)
        log_fm, log_mean = _lgamma(m + 1), math.log(mean)
        d = float(_round(max(6.0, min(m, math.sqrt(2 * m * math.log(32 * m / PI_4))))))
        cx = 2 * m + d
        scale_left, scale_right, inv_cx = math.sqrt(m), math.sqrt(cx / 2), 1 / cx
        c1 = scale_left * SQRT_PI_2
        c2 = math.sqrt(PI_4 * cx) * math.exp(inv_cx) + c1
        c3, c4 = c2 + 1, c2 + 2
        c5 = c4 + E_1_78
        c = 2 * cx * math.exp(-d * inv_cx * (1 + d / 2)) / d + c5
        spare: list[float] = []
        while True:
            u = c * self.canonical()
            e = -math.log(1.0 - self.canonical())
            w = 0.0
            if u <= c1:
                n = self._standard_normal(spare)
                y = -abs(n) * scale_left - 1
                x = float(math.floor(y))
                w = -n * n / 2
                if x < -m:
                    continue
            elif u <= c2:
                n = self._standard_normal(spare)
                y = 1 + abs(n) * scale_right
                x = float(math.ceil(y))
                w = y * (2 - y) * inv_cx
                if x > d:
                    continue
            elif u <= c3:
                x = -1.0
            elif u <= c4:
                x = 0.0
            elif u <= c5:
                x, w = 1.0, ONE_78
            else:
                v = -math.log(1.0 - self.canonical())
                y = d + v * 2 * (2 * m + d) / d
                x = float(math.ceil(y))
                w = -d * inv_cx * (1 + y / 2)
            if w - e - x * log_mean > log_fm - _lgamma(x + m + 1) or x + m >= INT_CEILING:
                continue
            return int(x + m + HALF_UNDER)

    def _standard_normal(self, spare: list[float]) -> float:
        """A standard normal (the polar method), its spare kept in `spare` for the next."""
        if spare:
            return spare.pop()
        first, second = self._polar()
        spare.append(second)
        return first

    def shuffle_array(self, items: np.ndarray) -> None:
        """`shuffle` of an int64 array in place, in one compiled pass when Numba is there (the
        same swaps: a delay model's shuffle of 10,000 robots every tick)."""
        n = len(items)
        kernel = jit.compiled(_pair_swaps)
        if n < 2 or kernel is None or 0xFFFFFFFF // n < n:
            values = items.tolist()
            self.shuffle(values)
            items[:] = values
            return
        i = 1
        if n % 2 == 0:
            j = self.uniform_int(0, 1)
            items[i], items[j] = items[j], items[i]
            i += 1
        while i < n:  # (more than one pass only when a rejected draw ran past the words seen)
            words = self.peek((n - i + 1) // 2 + 16)
            i, used = kernel(items, words, i, n)
            self.skip(used)

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Shuffle `items` in place (`std::shuffle`, two positions per draw)."""
        n = len(items)
        if n < 2:
            return
        if 0xFFFFFFFF // n < n:  # too many for two positions a word: one position a draw
            for i in range(1, n):
                j = self.uniform_int(0, i)
                items[i], items[j] = items[j], items[i]
            return
        i = 1
        if n % 2 == 0:  # n - 1 swaps, an odd number: one up front, the rest in pairs
            j = self.uniform_int(0, 1)
            items[i], items[j] = items[j], items[i]
            i += 1
        while i < n:
            b0 = i + 1
            b1 = b0 + 1
            x = self.uniform_int(0, b0 * b1 - 1)
            j, k = x // b1, x % b1
            items[i], items[j] = items[j], items[i]
            items[i + 1], items[k] = items[k], items[i + 1]
            i += 2


def _pair_swaps(items: np.ndarray, words: np.ndarray, i: int, n: int) -> tuple[int, int]:
    """`shuffle`'s swaps two at a time from position `i`, drawing from `words`: (where it got
    to, words used). It stops before a draw the words left cannot finish."""
    used = 0
    mask = np.uint64(0xFFFFFFFF)
    two32 = np.uint64(1) << np.uint64(32)
    while i < n:
        second = i + 2
        span = np.uint64((i + 1) * second)
        start = used
        if used >= words.shape[0]:
            return i, start
        product = words[used] * span
        used += 1
        low = product & mask
        if low < span:
            threshold = (two32 - span) % span
            while low < threshold:
                if used >= words.shape[0]:
                    return i, start
                product = words[used] * span
                used += 1
                low = product & mask
        both = np.int64(product >> np.uint64(32))
        a, b = both // second, both % second
        items[i], items[a] = items[a], items[i]
        items[i + 1], items[b] = items[b], items[i + 1]
        i += 2
    return i, used


def lround(x: float) -> int:
    """C's `lround`: to the nearest whole number, halves away from zero."""
    whole = math.floor(abs(x))
    up = abs(x) - whole >= 0.5
    return int(math.copysign(whole + up, x))


def _round(x: float) -> int:
    """C's `round`: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _c_lgamma() -> Callable[[float], float]:
    """The C library's lgamma (CPython's own differs in the last bits for half the integers,
    which would tip the Poisson's rejections now and then), or Python's without one."""
    name = ctypes.util.find_library("m")
    if name is None:
        return math.lgamma
    try:
        libm = ctypes.CDLL(name)
        function = libm.lgamma
    except (OSError, AttributeError):
        return math.lgamma
    function.restype = ctypes.c_double
    function.argtypes = [ctypes.c_double]
    return function


_lgamma = _c_lgamma()
