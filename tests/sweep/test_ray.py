"""Sweeps and fuzz runs on Ray give the rows the local pool gives. The sweep runs on a Ray of
fleetsim's own (started for the runs and shut down after them), the fuzz runs on one the test
started (used as it is and left running). One test: two Ray instances at once on two cores
would each wait for the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from fleetsim.fuzz import fuzz_specs, parse_checks, run_fuzz
from fleetsim.sweep import make_plan, run_sweep

from ..fuzz.helpers import LAPS, STOPS

ray = pytest.importorskip("ray")

ROBOTS = "robots[0].start.random"
KPIS = ("tasks_completed", "throughput_per_hour", "distance_m", "collisions", "steps")
FUZZ = ("run_id", "seed", "status", "check", "first_failure_s", "faults", "min_gap_m")


def test_ray_gives_the_same_rows_as_the_local_pool(tmp_path: Path) -> None:
    plan = make_plan("warehouse", [f"{ROBOTS}=3,6"], "1-2", duration=8)
    local = run_sweep(plan, tmp_path / "local.parquet", workers=2)
    on_ray = run_sweep(plan, tmp_path / "ray.parquet", workers=2, backend="ray")
    assert local.ran == on_ray.ran == 4 and local.failed == on_ray.failed == 0
    assert not ray.is_initialized()  # fleetsim's own Ray, shut down after its runs
    a, b = (
        {(r[ROBOTS], r["seed"]): r for r in pq.read_table(tmp_path / f).to_pylist()}
        for f in ("local.parquet", "ray.parquet")
    )
    assert a.keys() == b.keys() and len(a) == 4
    for key in a:
        assert {k: a[key][k] for k in KPIS} == {k: b[key][k] for k in KPIS}

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        specs = fuzz_specs(str(LAPS), 3, 1, STOPS, [], 40.0)
        checks = parse_checks("robot-collisions")
        local_f = run_fuzz(specs, checks, tmp_path / "lf.parquet", workers=2, shrink_runs=0)
        ray_f = run_fuzz(
            specs, checks, tmp_path / "rf.parquet", workers=2, backend="ray", shrink_runs=0
        )

        def rows(result: Any) -> list[tuple[Any, ...]]:
            return sorted(tuple(r[k] for k in FUZZ) for r in result.rows)

        assert rows(local_f) == rows(ray_f) and len(rows(ray_f)) == 3
        assert any(r[3] for r in rows(ray_f)) and ray_f.failing.keys() == local_f.failing.keys()
        assert ray.is_initialized()  # the test's Ray, left running
    finally:
        ray.shutdown()
