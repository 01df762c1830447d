"""`type: fleet_manager` in a scenario file, through the real `fleetsim` command: tasks run,
the summary shows the fleet's KPIs, and bad tasks are named before anything runs."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import yaml

from ..conftest import fleetsim


def site_scenario(tmp_path: Path, fleet: dict[str, Any], robots: int = 4) -> Path:
    cells = [(r, c) for r in range(4) for c in range(6)]
    nodes = [
        {"name": f"n{r}_{c}", "x": 3.0 * c, "y": 3.0 * r, "pickup": r == 0, "dropoff": r == 3}
        for r, c in cells
    ]
    lanes = [{"from": f"n{r}_{c}", "to": f"n{r}_{c + 1}"} for r, c in cells if c < 5]
    lanes += [{"from": f"n{r}_{c}", "to": f"n{r + 1}_{c}"} for r, c in cells if r < 3]
    body = {
        "name": "fleet",
        "simulation": {
            "timestep": 0.1,
            "duration": 300,
            "seed": 2,
            "target_rtf": 0,
            "collision_narrowphase": "aabb",
        },
        "site": {"graph": {"nodes": nodes, "lanes": lanes}},
        "robots": [
            {
                "name": "amr",
                "model": "mobile_robot",
                "start": ["n1_0", "n1_2", "n1_4", "n2_1"][:robots],
            }
        ],
        "plugins": [{"type": "fleet_manager", "params": fleet}],
    }
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def write_orders(path: Path, count: int) -> None:
    """Timed orders, one every 10 s, from the bottom row to the top row."""
    rows = "".join(f"o{k},n0_{k % 6},n3_{(k + 3) % 6},{k * 10}\n" for k in range(count))
    path.write_text("id,pickup,dropoff,release_time\n" + rows)


def test_a_poisson_stream_is_served_and_reported(tmp_path: Path) -> None:
    path = site_scenario(
        tmp_path,
        {"tasks": {"poisson": {"rate_per_hour": 20}}, "assignment": "greedy", "pick_time": 3},
    )
    result = fleetsim("run", str(path), "--fail-on", "robot-collisions")
    assert result.returncode == 0, result.stderr + result.stdout
    out = result.stdout
    assert "│ tasks" in out and "tasks/hour" in out and "cycle time        │ p50" in out
    done = int(out.split("│ tasks")[1].split("│")[1].split()[0])
    assert done >= 10  # 6 stations x 20 an hour for 300 s: about 10 released, most done
    assert "robot-robot 0" in out and "robot-structure 0" in out


def test_bad_tasks_fail_validation_with_their_place(tmp_path: Path) -> None:
    path = site_scenario(
        tmp_path,
        {
            "tasks": {
                "list": [
                    {"pickup": "n0_0", "dropoff": "n3_1"},
                    {"id": "late", "pickup": "n0_9", "dropoff": "n3_1"},
                ]
            }
        },
    )
    result = fleetsim("validate", str(path))
    assert result.returncode == 2
    assert "tasks[1] (late): unknown node 'n0_9'" in result.stderr
    both = site_scenario(tmp_path, {"tasks": {"list": [], "file": "x.csv"}})
    result = fleetsim("validate", str(both))
    assert result.returncode == 2 and "exactly one of 'list', 'poisson' or 'file'" in result.stderr
    odd = site_scenario(tmp_path, {"tasks": {"poisson": {"rate_per_hour": 5}}, "asignment": "x"})
    result = fleetsim("validate", str(odd))
    assert result.returncode == 2 and "did you mean 'assignment'" in result.stderr


def test_orders_from_a_file_beside_the_scenario(tmp_path: Path) -> None:
    write_orders(tmp_path / "orders.csv", 8)
    path = site_scenario(tmp_path, {"tasks": {"file": "orders.csv"}, "pick_time": 2})
    result = fleetsim("run", str(path), "--duration", "200")
    assert result.returncode == 0, result.stderr
    assert "8 done, 0 failed, 8 released" in result.stdout


def test_batteries_in_a_scenario_need_chargers(tmp_path: Path) -> None:
    path = site_scenario(
        tmp_path, {"tasks": {"poisson": {"rate_per_hour": 5}}, "battery": {"initial": 0.5}}
    )
    result = fleetsim("validate", str(path))
    assert result.returncode == 2 and "batteries need chargers" in result.stderr
    bad = site_scenario(
        tmp_path, {"tasks": {"poisson": {"rate_per_hour": 5}}, "battery": {"initial": 1.5}}
    )
    result = fleetsim("validate", str(bad))
    assert result.returncode == 2 and "battery.initial" in result.stderr


def test_results_files(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    write_orders(tmp_path / "orders.csv", 5)
    path = site_scenario(tmp_path, {"tasks": {"file": "orders.csv"}, "pick_time": 2})
    out = tmp_path / "out" / "results.json"
    result = fleetsim("run", str(path), "--duration", "150", "--output", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["metadata"]["scenario"] == "fleet" and doc["metadata"]["seed"] == 2
    assert doc["metadata"]["fleetsim_version"] and doc["kpis"]["tasks_completed"] == 5
    assert doc["summary"]["cycle_time_s.p50"] == doc["kpis"]["cycle_time_s"]["p50"]
    assert [r["robot"] for r in doc["robots"]] == ["amr_0", "amr_1", "amr_2", "amr_3"]
    assert sum(r["tasks_done"] for r in doc["robots"]) == 5
    assert all(t["status"] == "done" and t["done_at"] > t["released_at"] for t in doc["tasks"])
    total = sum(doc["robots"][0][f"{s}_s"] for s in ("idle", "moving", "waiting", "working"))
    assert abs(total - 150) < 0.2  # each robot's state times add up to the run

    csv_out = tmp_path / "results.csv"
    assert fleetsim("run", str(path), "--duration", "150", "--output", str(csv_out)).returncode == 0
    tasks = list(csv.DictReader((tmp_path / "results.tasks.csv").open()))
    assert [t["task"] for t in tasks] == [f"o{k}" for k in range(5)]
    run_row = next(csv.DictReader(csv_out.open()))
    assert run_row["tasks_completed"] == "5" and run_row["scenario"] == "fleet"

    pq_out = tmp_path / "results.parquet"
    assert fleetsim("run", str(path), "--duration", "150", "--output", str(pq_out)).returncode == 0
    table = pq.read_table(tmp_path / "results.tasks.parquet")
    assert table.num_rows == 5 and table.column("status").to_pylist() == ["done"] * 5
    meta = json.loads(pq.read_table(pq_out).schema.metadata[b"fleetsim"])
    assert meta["scenario"] == "fleet"

    bad = fleetsim("run", str(path), "--output", str(tmp_path / "results.xlsx"))
    assert bad.returncode == 2 and "use a .json, .csv or .parquet file name" in bad.stderr


def test_a_station_no_robot_can_reach_is_named_before_the_run(tmp_path: Path) -> None:
    path = site_scenario(tmp_path, {"tasks": {"poisson": {"rate_per_hour": 20}}})
    body = yaml.safe_load(path.read_text())
    graph = body["site"]["graph"]  # a pick-up station whose only lane leads away from it
    graph["nodes"].append({"name": "island", "x": -3.0, "y": 0.0, "pickup": True})
    graph["lanes"].append({"from": "island", "to": "n0_0", "bidirectional": False})
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    result = fleetsim("run", str(path))
    assert result.returncode == 2, result.stdout
    assert "tasks.poisson.pickups: 'island' cannot be reached from any robot's start" in (
        result.stderr
    )
    body["plugins"][0]["params"]["tasks"] = {
        "list": [{"id": "o1", "pickup": "island", "dropoff": "n3_1"}]
    }
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    result = fleetsim("run", str(path))
    assert result.returncode == 2 and "tasks[0] (o1): 'island' cannot be reached" in result.stderr
