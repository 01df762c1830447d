"""The bundled multi-floor building (`fleetsim run hospital`): 30 robots serve orders between
three floors by two lifts and through a door on each floor, for the scenario's first quarter
hour (its whole hour is benchmarks/hospital.py, which checks the same at the end). Oracles
checked every step: no robot on two floors at once (each is on a floor, or aboard a cabin at
its height), no cabin holding more robots than its capacity, no robot in a doorway unless the
door is open; and at the end every order done, no collision, no stall."""

from __future__ import annotations

import numpy as np

from fleetsim.devices import DoorMode
from fleetsim.scenario import build, load_scenario

QUARTER = ["simulation.duration=900", "plugins[0].params.tasks.poisson.until=700"]


def test_thirty_robots_serve_orders_across_three_floors() -> None:
    built = build(load_scenario("hospital", QUARTER))
    sim = built.sim
    problems: list[str] = []
    most_aboard = {name: 0 for name in ("LiftA", "LiftB")}
    with sim:
        site, doors, lifts = sim.site, sim.doors, sim.lifts
        assert site is not None and len(doors) == 3 and len(lifts) == 2
        floors = np.array(sorted(site.elevations.values()))
        handles = sim.handles_of(built.scene.robots)
        names = [r.name for r in built.scene.robots]
        openings = [(d, d.ends.mean(axis=0), d.ends[1] - d.ends[0]) for d in doors.doors.values()]

        def watch(*_: object) -> None:
            xyz = sim.get_poses(handles)[0]
            riding = {}
            for lift in lifts.lifts.values():
                most_aboard[lift.name] = max(most_aboard[lift.name], len(lift.aboard))
                riding.update({robot.name: lift.z for robot in lift.aboard.values()})
            for name, z in zip(names, xyz[:, 2].tolist(), strict=True):
                on_floor = bool(np.any(np.abs(floors - z) < 1e-6))
                if not on_floor and abs(riding.get(name, np.inf) - z) > 1e-6:
                    problems.append(f"{sim.sim_time:.1f} s: {name} at z {z:.3f}, on no floor")
            for door, centre, along in openings:
                if door.mode is DoorMode.OPEN:
                    continue
                on = np.abs(xyz[:, 2] - door.elevation) < 1e-6
                rel = xyz[on, :2] - centre
                unit = along / np.linalg.norm(along)
                across = np.abs(rel @ np.array([-unit[1], unit[0]]))
                inside = (across < 0.35) & (np.abs(rel @ unit) < np.linalg.norm(along) / 2)
                if inside.any():
                    problems.append(
                        f"{sim.sim_time:.1f} s: a robot in {door.name} while {door.mode.value}"
                    )

        sim.register_callback(watch)
        sim.run_simulation()
        kpis = built.plugins[0].manager.kpis()  # type: ignore[attr-defined]
    assert problems == []
    assert all(n <= lifts.lifts[name].capacity for name, n in most_aboard.items())
    assert kpis["tasks_released"] >= 10
    assert kpis["tasks_completed"] == kpis["tasks_released"] and kpis["tasks_failed"] == 0
    assert sum(kpis["collisions"].values()) == 0 and kpis["stalls"] == 0
    assert kpis["deadlocks_unresolved"] == 0
    assert kpis["lift_rides"] >= 10 and kpis["door_cycles"] >= 10
    assert all(v["trips"] > 0 for v in kpis["lifts"].values())  # both lifts used
