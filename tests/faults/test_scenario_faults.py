"""A scenario's `faults:` section: checked like every section, applied with the fleet manager's
batteries and chargers, reported in the results, the same faults for the same seed, and a run's
faults written out as a fixed schedule make the same run again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fleetsim import ConfigError
from fleetsim.scenario import build, load_scenario

from .warehouse_runs import run

STOPS = "faults={seed: 4, robots: [{type: stop, rate_per_hour: 20, duration: [5, 20]}]}"
BATTERY = (
    "plugins[0].params.battery={drain_per_s: 0.0004, drain_per_m: 0.001, low: 0.5, resume: 0.7}"
)


def test_the_same_seed_gives_the_same_faults_and_the_same_run() -> None:
    first, injector = run(STOPS)
    again, _ = run(STOPS)
    assert first.tables["faults"] == again.tables["faults"] and len(first.tables["faults"]) > 10
    assert first.kpis == again.kpis  # the whole run repeats, faults and all
    assert first.kpis["faults"]["stop"] == len(first.tables["faults"])
    other, _ = run(STOPS.replace("seed: 4", "seed: 5"))
    assert other.tables["faults"] != first.tables["faults"]
    calm, _ = run()
    assert "faults" not in calm.kpis
    assert injector.kpis()["faults"]["stop"] == first.kpis["faults"]["stop"]


def test_a_runs_faults_written_out_make_the_same_run(tmp_path: Path) -> None:
    first, injector = run(STOPS)
    events = injector.schedule_rows()
    scenario = tmp_path / "again.yaml"
    spec = yaml.safe_load(Path(load_scenario("warehouse").path).read_text())
    spec["simulation"]["duration"] = 240.0
    spec["faults"] = {"events": events}
    scenario.write_text(yaml.safe_dump(spec))
    out = tmp_path / "again.json"
    done = subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", str(scenario), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    again = json.loads(out.read_text())
    assert again["faults"] == first.tables["faults"]
    assert again["kpis"]["tasks_completed"] == first.kpis["tasks_completed"]
    assert again["kpis"]["distance_m"] == pytest.approx(first.kpis["distance_m"], abs=1e-6)
    assert "faults" in done.stdout and "stop" in done.stdout  # the summary says so


def test_battery_spikes_and_a_charger_down_act_on_the_fleet_manager() -> None:
    spikes = (
        BATTERY,
        "faults={robots: [{type: battery, at: [{robot: amr_0, time: 10}], "
        "drain: 0.4}], site: [{type: charger_down, target: park_0_1, at: 0, "
        "duration: 600}]}",
    )
    summary, injector = run(*spikes, duration=600.0)
    manager = injector.manager
    assert manager is not None and manager.charging.batteries is not None
    charger = manager.graph.node("park_0_1")
    assert charger in manager.charging.down  # still down at the end
    assert summary.kpis["faults"]["battery"] == 1 and summary.kpis["faults"]["charger_down"] == 1
    assert summary.kpis["battery"]["charging_sessions"] > 0  # robots charged elsewhere
    rows = [r for r in summary.tables["robots"] if r["robot"] == "amr_0"]
    assert rows[0]["battery"] is not None


def test_a_bad_faults_section_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"faults\.robots\[0\]\.type: Input should be .stop."):
        load_scenario("warehouse", ["faults={robots: [{type: stall}]}"])
    with pytest.raises(
        ConfigError,
        match=r"faults\.robots\[0\]\.at\[0\]\.robot: no robot 'amr_999' in the run: did you mean",
    ):
        build(
            load_scenario(
                "warehouse", ["faults={robots: [{type: stop, at: [{robot: amr_999, time: 5}]}]}"]
            )
        )
    with pytest.raises(
        ConfigError, match="faults: battery faults need a fleet manager with batteries"
    ):
        build(load_scenario("warehouse", ["faults={robots: [{type: battery, rate_per_hour: 1}]}"]))


def test_an_order_burst_and_a_closed_station_change_the_demand() -> None:
    calm, _ = run(duration=300.0)
    burst, injector = run(
        "faults={demand: [{type: order_burst, at: 30, count: 25}, "
        "{type: station_closed, target: drop_0, at: 0, duration: 200}]}",
        duration=300.0,
    )
    assert burst.kpis["tasks_released"] == calm.kpis["tasks_released"] + 25
    bursts = [t for t in burst.tables["tasks"] if t["task"].startswith("burst")]
    assert len(bursts) == 25 and all(t["release_time"] == pytest.approx(30.0) for t in bursts)
    through = [t for t in burst.tables["tasks"] if "drop_0" in t["places"]]
    assert through and all((t["assigned_at"] or 1e9) >= 200.0 - 1e-9 for t in through)
    assert injector.kpis()["faults"]["station_closed"] == 1
    with pytest.raises(ConfigError, match="unknown node 'drop_99'"):
        run("faults={demand: [{type: station_closed, target: drop_99}]}")


def test_a_changed_order_mix_moves_the_orders_released_while_it_lasts() -> None:
    """From 60 s to 180 s every order goes to drop_0 or drop_1, from the stations it would have;
    before and after, the mix is the scenario's."""
    calm, _ = run(duration=300.0)
    mixed, injector = run(
        "faults={demand: [{type: order_mix, at: 60, duration: 120, dropoffs: [drop_0, drop_1]}]}",
        duration=300.0,
    )
    inside = [t for t in mixed.tables["tasks"] if 60.0 <= t["release_time"] < 180.0]
    outside = [t for t in mixed.tables["tasks"] if not 60.0 <= t["release_time"] < 180.0]
    assert len(inside) > 5 and {t["places"].split()[-1] for t in inside} <= {"drop_0", "drop_1"}
    calm_by_id = {t["task"]: t for t in calm.tables["tasks"]}
    assert all(t["places"] == calm_by_id[t["task"]]["places"] for t in outside)
    assert [t["places"].split()[0] for t in inside] == [
        calm_by_id[t["task"]]["places"].split()[0] for t in inside
    ]  # (the same pick-ups)
    assert len({t["places"].split()[-1] for t in outside}) > 2
    (row,) = injector.rows()
    assert row["kind"] == "order_mix" and row["target"] == "->drop_0,drop_1"
    with pytest.raises(ConfigError, match="give pickups, dropoffs or both"):
        load_scenario("warehouse", ["faults={demand: [{type: order_mix, at: 5}]}"])
    with pytest.raises(ConfigError, match="unknown node 'drop_99'"):
        run("faults={demand: [{type: order_mix, dropoffs: [drop_99]}]}")
