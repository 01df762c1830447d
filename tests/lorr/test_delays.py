"""The kit's execution delays: the same `delayIntervals` as the kit's own runs of its example
problems (`../shared/lorr/runs`), and each rule of the generator on hand-made cases."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.lorr import DelayConfig, DelayGenerator
from fleetsim.lorr import kit_random as kr

LORR = Path(__file__).resolve().parents[3] / "shared" / "lorr"
PROBLEMS = (
    "maze.domain/maze-example_40",
    "room.domain/room-example_150",
    "random.domain/random-example_400",
)
RUNS = [(p, run) for p in PROBLEMS for run in ("delay-pydet-r1", "delay-pydet-t300s1000-r1")]


@pytest.mark.parametrize(("problem", "run"), RUNS)
def test_the_delays_are_the_kits_own(problem: str, run: str) -> None:
    """Poisson events among 40, 150 and 400 robots (shuffles of every size the available
    robots come to), uniform durations: every interval of the kit's run, over 500 and 1,000
    ticks."""
    domain, name = problem.split("/")
    given = json.loads((LORR / "problems" / domain / f"{name}-delay.json").read_text())
    with gzip.open(LORR / "runs" / f"{name}-{run}.output.json.gz") as f:
        kit = json.load(f)
    delays = DelayGenerator(DelayConfig.from_json(given["delayConfig"]), given["teamSize"])
    for _ in range(kit["makespan"]):
        delays.next_tick()
    assert [[list(i) for i in robot] for robot in delays.intervals] == kit["delayIntervals"]
    assert sum(map(len, kit["delayIntervals"])) >= 10


def test_a_delayed_robot_waits_its_ticks_and_is_not_drawn_meanwhile() -> None:
    """Bernoulli with p = 1: every robot is delayed whenever it is free, for [min, max] ticks;
    a delay drawn at tick t for d ticks is [t, t + d], and the next one starts at t + d."""
    config = DelayConfig(seed=3, min_delay=2, max_delay=5, event_model="bernoulli", p_delay=1.0)
    delays = DelayGenerator(config, 6)
    waiting = []
    for _ in range(60):
        started = delays.next_tick()
        assert all(2 <= ticks <= 5 for _, ticks in started)
        waiting.append(delays.delayed())
    for robot in delays.intervals:
        assert robot[0][0] == 0
        for (start, end), (after, _) in itertools.pairwise(robot):
            assert after == end  # (free again at its end: drawn again at once)
            assert 2 <= end - start <= 5
    assert all(all(w) for w in waiting)  # p = 1: never free for a whole tick
    durations = {end - start for robot in delays.intervals for start, end in robot}
    assert durations == {2, 3, 4, 5}


def test_fixed_and_gaussian_durations() -> None:
    """min == max draws nothing for the duration (the engine moves on only for the events);
    a Gaussian with no spread rounds its mean half away from zero; with spread, durations
    stay within [min, max]."""
    fixed = DelayGenerator(DelayConfig(seed=5, min_delay=7, max_delay=7, p_delay=0.5), 4)
    engine = kr.MT19937(5)
    for _ in range(20):
        started = fixed.next_tick()
        free = 4 - sum(fixed.delayed()) + len(started)  # (robots drawn for this tick)
        for _ in range(free):
            kr.bernoulli(engine, 0.5)
        assert all(ticks == 7 for _, ticks in started)
    assert fixed._rng() == engine()  # the same words used: none for the durations
    gaussian = {"duration_model": "gaussian", "gauss_mean_ratio": 0.5}
    flat = DelayConfig(seed=1, min_delay=10, max_delay=15, p_delay=1.0, **gaussian)
    assert DelayGenerator(flat, 1).next_tick() == [(0, 13)]  # 12.5 rounds to 13
    spread = DelayConfig(seed=2, min_delay=10, max_delay=30, p_delay=0.3, event_model="poisson",
                         gauss_std_ratio=0.6, **gaussian)  # fmt: skip
    wide = DelayGenerator(spread, 30)
    seen = [ticks for _ in range(300) for _, ticks in wide.next_tick()]
    assert min(seen) == 10 and max(seen) == 30 and len(set(seen)) > 15  # clamped, spread


def test_the_kits_checks_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"delayConfig\.minDelay must be > 0"):
        DelayConfig.from_json({"minDelay": 0, "maxDelay": 3})
    with pytest.raises(ConfigError, match=r"delayConfig\.pDelay must be in \[0, 1\]"):
        DelayConfig.from_json({"minDelay": 1, "maxDelay": 3, "pDelay": 2})
    with pytest.raises(ConfigError, match="unknown key 'pdelay'"):
        DelayConfig.from_json({"minDelay": 1, "pdelay": 0.1})
    with pytest.raises(ConfigError, match="eventModel 'often'"):
        DelayConfig.from_json({"minDelay": 1, "maxDelay": 1, "eventModel": "often"})
    busy = DelayConfig(min_delay=1, max_delay=3, event_model="poisson", p_delay=0.01)
    with pytest.raises(ConfigError, match=r"Poisson mean of 100: .* means below 12"):
        DelayGenerator(busy, 10_000)
