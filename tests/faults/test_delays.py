"""The delays are the League of Robot Runners kit's own: for the kit's example problems, the
intervals of every robot equal those in the kit's output (its `delayIntervals`), under each
event model (Bernoulli, Poisson) and duration model (uniform, gaussian); and the C++ draws
underneath match known values of `std::mt19937`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fleetsim.errors import ConfigError
from fleetsim.faults.delays import DelayConfig, DelayGenerator
from fleetsim.faults.stdrandom import StdRandom

LORR = Path(__file__).parents[3] / "shared" / "lorr"
RUNS = [  # (kit output, problem): bernoulli+gaussian, bernoulli+uniform, poisson+uniform
    ("maze-example_40-delay-pydet-t300s1000-r1", "maze"),
    ("random-example_400-delay-pydet-r1", "random"),
    ("room-example_150-delay-pydet-t300s1000-r1", "room"),
]


@pytest.mark.parametrize(("run", "problem"), RUNS, ids=[p for _, p in RUNS])
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
    assert sum(map(len, want)) >= 14  # (there were delays to compare)


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
    with pytest.raises(ValueError, match="under 12"):
        rng.poisson(20.0)


def test_a_bad_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="min_delay <= max_delay"):
        DelayConfig(min_delay=5, max_delay=2)
    with pytest.raises(ConfigError, match="probability"):
        DelayConfig(p=1.5)
