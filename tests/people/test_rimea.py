"""The RiMEA guideline's tests that apply to a crowd on one floor, short versions (the full
runs: benchmarks/people.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fleetsim.people import free_speeds, rimea


def test_1_one_person_keeps_its_speed_along_a_corridor() -> None:
    seconds = rimea.corridor_time(40.0, 1.33)
    assert 26.0 <= seconds <= 34.0
    assert seconds == pytest.approx(40.0 / 1.33, abs=0.05)  # (nothing slows a lone walker)


def test_4_speed_falls_with_density_as_weidmanns_curve() -> None:
    densities = [0.5, 1.0, 2.0, 3.0]
    speeds = [rimea.fundamental_diagram(d, seconds=30.0).speed for d in densities]
    assert all(a > b for a, b in itertools.pairwise(speeds)), speeds
    expected = rimea.weidmann_speed(np.array(densities))
    assert np.abs(np.array(speeds[1:]) - expected[1:]).max() < 0.15, (speeds, expected)
    assert speeds[0] > 1.0  # (at 0.5 a square metre people walk almost freely)


def test_6_a_group_rounds_a_corner_inside_the_walls() -> None:
    corner = rimea.corner(people=20)
    assert corner.seconds < 45.0
    assert corner.deepest <= 0.0 and not corner.left_corridor


def test_7_free_walking_speeds_follow_the_population() -> None:
    speeds = free_speeds(20_000, np.random.default_rng(0))
    assert speeds.mean() == pytest.approx(1.34, abs=0.01)
    assert speeds.std() == pytest.approx(0.26, abs=0.01)
    assert speeds.min() >= 0.6 and speeds.max() <= 2.0


def test_12_a_jam_forms_before_a_bottleneck_and_flows_through_it() -> None:
    result = rimea.bottleneck(people=60)
    assert np.isfinite(result.seconds)  # everyone left
    assert result.crowded >= 10  # a jam before the entrance
    assert 0.8 <= result.flow <= 2.5  # people a second through 1 m (measured: 1.1 to 1.9)
    assert result.deepest <= 0.0
