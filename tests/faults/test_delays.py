"""The delays are the League of Robot Runners kit's own: for the kit's example problems, the
intervals of every robot equal those in the kit's output (its `delayIntervals`), under each
event model (Bernoulli, Poisson) and duration model (uniform, gaussian); and the C++ draws
underneath match known values of `std::mt19937`."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.stdrandom import StdRandom

LORR = Path(__file__).parents[3] / "shared" / "lorr"
RUNS = [  # (kit output, problem): bernoulli+gaussian, bernoulli+uniform, poisson+uniform
    (f"{name}-delay-pydet{variant}-r1", name.split("-")[0])
    for name in ("maze-example_40", "random-example_400", "room-example_150")
    for variant in ("", "-t300s1000")  # 500 and 1,000 ticks
]


@pytest.mark.parametrize(("run", "problem"), RUNS, ids=[r for r, _ in RUNS])
def test_the_intervals_are_the_kits(run: str, problem: str) -> None:
    if not LORR.is_dir():
        pytest.fail(f"the kit's outputs are expected in {LORR}")
    with gzip.open(LORR / "runs" / f"{run}.output.json.gz") as kit:
        out = json.loads(kit.read())
    problem_file = next((LORR / "problems" / f"{problem}.domain").glob("*-delay.json"))
    config = DelayConfig.from_kit(json.loads(problem_file.read_text())["delayConfig"])
    delays = DelayGenerator(config, out["teamSize"])
    for _ in range(out["makespan"]):
        delays.next_tick()
    want = [[tuple(interval) for interval in robot] for robot in out["delayIntervals"]]
    assert delays.intervals == want
    assert sum(map(len, want)) >= 10  # (there were delays to compare)


def test_the_engine_is_mt19937() -> None:
    rng = StdRandom(5489)  # std::mt19937's default seed: its first output is well known
    assert rng.raw() == 3499211612
    rng = StdRandom(5489)
    for _ in range(9999):
        rng.raw()
    assert rng.raw() == 4123659995  # the C++ standard's check: the 10,000th output


def test_draws_stay_in_their_ranges() -> None:
    rng = StdRandom(7)
    ints = [rng.uniform_int(3, 9) for _ in range(2000)]
    assert min(ints) == 3 and max(ints) == 9
    assert all(0.0 <= rng.canonical() < 1.0 for _ in range(1000))
    items = list(range(11))
    rng.shuffle(items)
    assert sorted(items) == list(range(11)) and items != list(range(11))
    assert 0 <= rng.poisson(1.5) < 40
    with pytest.raises(ValueError, match="mean from 0 to under 2"):
        rng.poisson(float("nan"))


def test_a_bad_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="min_delay <= max_delay"):
        DelayConfig(min_delay=5, max_delay=2)
    with pytest.raises(ConfigError, match="probability"):
        DelayConfig(p=1.5)


def test_a_delayed_robot_waits_its_ticks_and_is_not_drawn_meanwhile() -> None:
    """Bernoulli with p = 1: every robot is delayed whenever it is free, for [min, max] ticks;
    a delay drawn at tick t for d ticks is [t, t + d], and the next one starts at t + d."""
    delays = DelayGenerator(DelayConfig(seed=3, p=1.0, min_delay=2, max_delay=5), 6)
    waiting = []
    for _ in range(60):
        delays.next_tick()
        waiting.append(all(delays.delayed(i) for i in range(6)))
    for robot in delays.intervals:
        assert robot[0][0] == 0
        for (start, end), (after, _) in itertools.pairwise(robot):
            assert after == end  # (free again at its end: drawn again at once)
            assert 2 <= end - start <= 5
    assert all(waiting)  # p = 1: never free for a whole tick
    assert {end - start for robot in delays.intervals for start, end in robot} == {2, 3, 4, 5}


def test_fixed_and_gaussian_durations() -> None:
    """min == max draws nothing for the duration (the engine moves on only for the events);
    a Gaussian with no spread rounds its mean half away from zero; with spread, durations
    stay within [min, max]."""
    fixed = DelayGenerator(DelayConfig(seed=5, p=0.5, min_delay=7, max_delay=7), 4)
    engine = StdRandom(5)
    for _ in range(20):
        free = int((fixed.remaining <= 1).sum())  # (the robots drawn for at the next tick)
        started = fixed.next_tick()
        for _ in range(free):
            engine.canonical()
        assert all(fixed.remaining[i] == 7 for i in started)
    assert fixed._rng.raw() == engine.raw()  # the same words used: none for the durations
    flat = DelayConfig(
        seed=1,
        p=1.0,
        min_delay=10,
        max_delay=15,
        duration_model="gaussian",
        mean_ratio=0.5,
        std_ratio=0.0,
    )
    one = DelayGenerator(flat, 1)
    one.next_tick()
    assert one.intervals == [[(0, 13)]]  # 12.5 rounds to 13
    spread = DelayConfig(
        seed=2,
        p=0.3,
        min_delay=10,
        max_delay=30,
        event_model="poisson",
        duration_model="gaussian",
        mean_ratio=0.5,
        std_ratio=0.6,
    )
    wide = DelayGenerator(spread, 30)
    for _ in range(300):
        wide.next_tick()
    seen = [end - start for robot in wide.intervals for start, end in robot]
    assert min(seen) == 10 and max(seen) == 30 and len(set(seen)) > 15  # clamped, spread


def test_the_kits_checks_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"delayConfig\.minDelay must be a whole number > 0"):
        DelayConfig.from_kit({"minDelay": 0, "maxDelay": 3})
    with pytest.raises(ConfigError, match=r"delayConfig\.pDelay must be in \[0, 1\]"):
        DelayConfig.from_kit({"minDelay": 1, "maxDelay": 3, "pDelay": 2})
    with pytest.raises(ConfigError, match="unknown key 'pdelay'"):
        DelayConfig.from_kit({"minDelay": 1, "pdelay": 0.1})
    with pytest.raises(ConfigError, match="eventModel 'often'"):
        DelayConfig.from_kit({"minDelay": 1, "maxDelay": 1, "eventModel": "often"})


def test_large_fleets_draw_poisson_events_by_the_rejection_method() -> None:
    """10,000 robots at p 0.01: a Poisson mean of 100 a tick (the kit's 2026 scale), drawn as
    the C++ library draws means of 12 and more: about 100 robots a tick while they are free."""
    busy = DelayConfig(p=0.01, min_delay=1, max_delay=1, event_model="poisson", seed=4)
    delays = DelayGenerator(busy, 10_000)
    counts = [len(delays.next_tick()) for _ in range(40)]
    assert 60 < sum(counts) / len(counts) < 140 and len(set(counts)) > 5
