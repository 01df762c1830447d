"""Trees run by BehaviorTree.CPP on real people and robots in a real simulation: a worker's
walk, wait and leave, a robot's mission with its battery, trees halted by a condition, trees
ticked on change and at their rate (not every step), bad trees refused, reset and two
simulations."""

from __future__ import annotations

import numpy as np
import pytest

from fleetsim import Agent, AgentSpawnParams, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.behavior import BehaviorError, Behaviors
from fleetsim.errors import ConfigError
from fleetsim.fleet.battery import BatteryParams
from fleetsim.site import Site

pytest.importorskip("behaviortreepy", reason="behaviour trees need fleetsim[bt]")


def row_site() -> Site:
    """A 20 m aisle, nodes n0..n10 every 2 m, one-way east; n0 a charger."""
    nodes = [{"name": f"n{i}", "x": 2.0 * i, "y": 0.0} for i in range(11)]
    nodes[0]["charger"] = True
    for i in (3, 7):
        nodes[i]["pickup"] = True
    lanes = [{"from": f"n{i}", "to": f"n{i + 1}"} for i in range(10)]
    return Site.from_graph(nodes, lanes)


def tree(body: str) -> str:
    return f'<root BTCPP_format="4"><BehaviorTree ID="T">{body}</BehaviorTree></root>'


def simulation(seed: int = 3) -> MultiRobotSimulationCore:
    sim = MultiRobotSimulationCore(SimulationParams(timestep=0.1, seed=seed, target_rtf=0))
    sim.set_site(row_site())
    return sim


def robot(sim: MultiRobotSimulationCore, x: float = 0.0) -> Agent:
    params = AgentSpawnParams("mobile_robot", name="amr", initial_pose=Pose.from_xyz(x, 0.0, 0.0))
    return Agent.from_params(params, sim)


def run_until_done(sim: MultiRobotSimulationCore, trees: int, steps: int) -> list[dict]:
    finished: list[dict] = []
    sim.on("behavior_finished", lambda _sim, row: finished.append(row))
    for _ in range(steps):
        sim.step_once()
        if len(finished) == trees:
            break
    return finished


WORKER = tree("""<Sequence>
  <GoTo place="n8"/>
  <Wait seconds="5"/>
  <Script code="back:='n2'"/>
  <GoTo place="{back}"/>
  <Leave/>
</Sequence>""")


def test_a_worker_walks_waits_walks_back_and_leaves() -> None:
    with simulation() as sim:
        trees = Behaviors(sim)
        [person] = sim.people.add(np.array([[0.0, 0.0]]), [np.array([[0.0, 0.0]])],
                                  np.array([1.0]))  # fmt: skip
        trees.add_person(int(person), WORKER, at="n0")
        seen: list[tuple[float, float]] = []
        sim.on("post_step", lambda *_: seen.append((sim.sim_time, float(
            sim.people.positions[0, 0])) if len(sim.people.crowd) else None))  # fmt: skip
        [done] = run_until_done(sim, 1, 800)
        assert done["status"] == "success" and done["name"] == "person 0"
        xs = np.array([x for _, x in [s for s in seen if s is not None]])
        t = np.array([t for t, _ in [s for s in seen if s is not None]])
        at_far = t[np.abs(xs - 16.0) < 0.31]
        # walked east at 1 m/s (16 m: about 16 s), stood 5 s, walked west 12 m (12 s), left
        assert 15.0 < at_far[0] < 18.5 and at_far[-1] - at_far[0] >= 5.0
        assert abs(xs[-1] - 4.0) < 0.31 and 32.0 < done["time"] < 37.0
        assert len(sim.people.crowd) == 0 and sim.people.kpis()["people_arrived"] == 1
        assert trees.kpis()["trees_succeeded"] == 1
        assert trees.kpis()["tree_ticks"] < 0.3 * done["time"] / 0.1  # (not every step)


MISSION = tree("""<Repeat num_cycles="3">
  <Fallback>
    <Sequence>
      <BatteryAbove percent="60"/>
      <GoTo place="n9"/>
      <GoTo place="n1"/>
    </Sequence>
    <Sequence>
      <GoTo place="n0"/>
      <Charge percent="95"/>
    </Sequence>
  </Fallback>
</Repeat>""")


def test_a_robots_mission_drives_charges_when_low_and_ends() -> None:
    with simulation() as sim:
        amr = robot(sim)
        trees = Behaviors(sim, battery=BatteryParams(initial=0.7, drain_per_m=0.004,
                                                     charge_per_s=0.02))  # fmt: skip
        trees.add_robot(amr, MISSION)
        charges: list[float] = []
        sim.on("post_step", lambda *_: charges.append(float(trees.batteries.percent[0])))
        [done] = run_until_done(sim, 1, 3000)
        assert done == {"name": "amr", "kind": "robot", "status": "success",
                        "time": pytest.approx(done["time"])}  # fmt: skip
        percent = np.array(charges)
        # 70%: one round of 32 m (-12.8%) to 57%, then to the charger and up to 95%
        assert percent.min() < 60.0 and percent.max() >= 95.0
        x = amr.get_pose().x  # (ended at n0 after charging, or at n1 after a round)
        assert abs(x) < 0.2 or abs(x - 2.0) < 0.2


def test_a_reactive_condition_halts_a_walk_and_the_person_stands() -> None:
    halt = tree("""<ReactiveSequence>
      <Inverter><RobotNear distance="3"/></Inverter>
      <GoTo place="n10"/>
    </ReactiveSequence>""")
    with simulation() as sim:
        robot(sim, x=12.0)  # stands at n6: the walker stops when 3 m from it
        trees = Behaviors(sim, rate_hz=5.0)
        [person] = sim.people.add(np.array([[0.0, 0.0]]), [np.array([[0.0, 0.0]])],
                                  np.array([1.0]))  # fmt: skip
        trees.add_person(int(person), halt, at="n0")
        [done] = run_until_done(sim, 1, 400)
        assert done["status"] == "failure"
        x = float(sim.people.positions[0, 0])
        assert 8.0 < x < 9.3  # (halted within a tick of coming within 3 m)
        for _ in range(50):
            sim.step_once()
        assert abs(float(sim.people.positions[0, 0]) - x) < 0.3  # stands: its walk was stopped


def test_choose_place_writes_its_output_and_is_seeded() -> None:
    chooser = tree("""<Sequence>
      <ChoosePlace tag="pickup" place="{face}"/>
      <GoTo place="{face}"/>
      <Leave/>
    </Sequence>""")

    def ends(seed: int) -> list[float]:
        with simulation(seed) as sim:
            trees = Behaviors(sim)
            ids = sim.people.add(np.array([[0.0, 0.0], [0.0, 1.0], [0.0, -1.0]]),
                                 [np.array([[0.0, 0.0]])] * 3)  # fmt: skip
            ends: dict[int, float] = {}
            crowd = sim.people.crowd
            sim.on("pre_step", lambda *_: ends.update(
                zip(crowd.ids.tolist(), crowd.x[:, 0].tolist(), strict=True)))  # fmt: skip
            for person in ids.tolist():
                trees.add_person(person, chooser, at="n0")
            run_until_done(sim, 3, 600)
            return [round(ends[k]) for k in sorted(ends)]

    first = ends(5)
    assert set(first) <= {6, 14} and first == ends(5)  # pick faces n3 and n7; same seed, same


def test_a_tree_for_robots_is_refused_for_a_person_and_bad_values_fail_the_leaf() -> None:
    with simulation() as sim:
        trees = Behaviors(sim)
        [person] = sim.people.add(np.array([[0.0, 0.0]]), [np.array([[0.0, 0.0]])])
        with pytest.raises(BehaviorError, match="<Charge> is for robots, not persons"):
            trees.add_person(int(person), tree('<Charge percent="90"/>'), at="n0")
        with pytest.raises(ConfigError, match="no person with id"):
            trees.add_person(99, WORKER, at="n0")
        bad = tree('<Sequence><Script code="s:=\'soon\'"/><Wait seconds="{s}"/></Sequence>')
        trees.add_person(int(person), bad, at="n0")
        [done] = run_until_done(sim, 1, 20)
        assert done["status"] == "failure"
        assert "port seconds='soon' is not a number" in trees.kpis()["leaf_failures"][-1]
        with pytest.raises(ConfigError, match="has its behaviour trees already"):
            Behaviors(sim)


def test_reset_drops_the_trees_and_two_simulations_keep_their_own() -> None:
    a, b = simulation(), simulation()
    try:
        for sim in (a, b):
            Behaviors(sim)
            [p] = sim.people.add(np.array([[0.0, 0.0]]), [np.array([[0.0, 0.0]])])
            sim.behaviors.add_person(int(p), WORKER, at="n0")
        for _ in range(30):
            a.step_once()
        assert a.behaviors.owners[0].ticks > 0 and b.behaviors.owners[0].ticks == 0
        a.reset()
        assert a.behaviors is None
        a.set_site(row_site())
        for _ in range(10):
            a.step_once()  # (the old trees' hooks are gone)
        assert not any(getattr(h, "__qualname__", "").startswith("Behaviors")
                       for h in a.events._handlers_of("post_step"))  # fmt: skip
        assert Behaviors.of(a).owners == []
    finally:
        a.close()
        b.close()
