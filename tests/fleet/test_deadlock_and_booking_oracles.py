"""Two rules pinned down: a deadlock episode counts as resolved only once every robot in it has
moved on (passed a node since it was last found), and comes back as the same episode; a robot
that has booked a lift keeps its booking until it is in the cabin."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fleetsim.fleet import deadlocks
from fleetsim.scenario import build, load_scenario

from ..site.buildings import TOWER, write_scenario


def test_a_deadlock_is_resolved_only_once_every_robot_in_it_moved_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(deadlocks, "_resolve", lambda *_a, **_k: False)  # (undoing: not tested)
    waits = {0: 1, 1: 0}
    t = SimpleNamespace(
        sim=SimpleNamespace(sim_time=10.0),
        waiting_on=np.array([5, 6, -1]),
        active=np.ones(3, dtype=bool),
        episodes={},
        deadlocks=[],
        cycles=set(),
        passed=np.zeros(3, dtype=np.int64),
        blocked_by_idle=[],
        graph=SimpleNamespace(names=[f"n{k}" for k in range(8)]),
        robots=[SimpleNamespace(name=n) for n in ("a", "b", "c")],
        waits_for=lambda i: waits.get(i, -1),
    )
    deadlocks.find_deadlocks(t)  # type: ignore[arg-type]
    (episode,) = t.deadlocks
    assert episode.robots == ("a", "b") and not episode.resolved
    t.waiting_on[:] = -1  # the cycle is gone ...
    t.sim.sim_time, t.passed[0] = 11.0, 1  # ... but only a has passed a node
    deadlocks.find_deadlocks(t)  # type: ignore[arg-type]
    assert not episode.resolved
    t.sim.sim_time, t.passed[1] = 12.0, 1  # b too: resolved now
    deadlocks.find_deadlocks(t)  # type: ignore[arg-type]
    assert episode.resolved and episode.resolved_at == 12.0
    t.waiting_on[:2] = (5, 6)  # it comes back: the same episode, unresolved, seen twice
    t.sim.sim_time = 13.0
    deadlocks.find_deadlocks(t)  # type: ignore[arg-type]
    assert t.deadlocks == [episode] and not episode.resolved and episode.detections == 2


def test_a_robot_keeps_its_lift_booking_until_it_is_in_the_cabin(tmp_path: Path) -> None:
    tower = tmp_path / "tower.building.yaml"
    tower.write_text(TOWER)
    built = build(load_scenario(write_scenario(tower)))
    sim = built.sim
    lost: list[str] = []
    booked: dict[str, bool] = {}

    def watch(*_: object) -> None:
        lift = sim.lifts["Lift1"]
        holding = {c.requester for c in lift.queue} | {lift.session, *lift.guests}
        for robot in built.scene.robots:
            rider = f"robot:{robot.name}"
            ride = sim.lifts.rides.riding(rider)
            waiting = ride is not None and ride.phase == "called"
            if waiting and rider in holding:
                booked[rider] = True
            elif booked.get(rider) and not (ride is not None and ride.phase == "aboard"):
                lost.append(f"{sim.sim_time:.1f}: {robot.name} dropped its booking ({ride})")
                booked[rider] = False
            elif ride is not None and ride.phase == "aboard":
                booked[rider] = False  # in the cabin: the booking did its job
        if sim.sim_time == pytest.approx(60.0):
            sim.lifts.release("Lift1", "outsider")

    with sim:
        sim.lifts.request("Lift1", "outsider", "L3")  # the lift is busy for the first minute
        sim.register_callback(watch)
        sim.run_simulation()
        kpis = built.plugins[0].manager.kpis()  # type: ignore[attr-defined]
    assert lost == []
    assert kpis["tasks_completed"] == 4 and kpis["lift_rides"] >= 4
