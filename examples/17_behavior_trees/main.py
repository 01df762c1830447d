"""Behaviour trees: pickers on a shift, and a tug on its mission, in the warehouse.

The bundled `warehouse_shift` (robots under the fleet manager, two shifts of pickers, each
picker running `picker_shift.xml`, a BehaviorTree.CPP tree), with one more robot, a tug, that
runs `tug.xml` (beside this file): it shuttles between two drop-off stations while its battery
holds, and charges below 30%. It prints, minute by minute, how many pickers are on the floor
and what the tug's battery holds, then how the trees ended:
    python examples/17_behavior_trees/main.py --steps 12000
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fleetsim.fleet.battery import BatteryParams
from fleetsim.scenario import build, load_scenario
from fleetsim.scenario.runner import run_scenario

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12_000, help="steps of 0.1 s (20 minutes)")
    args = parser.parse_args()
    tug = (f"{{name: tug, model: mobile_robot, start: [park_38_1], behavior: {HERE / 'tug.xml'},"
           " blackboard: {a: drop_0, b: drop_9, charger: park_38_1}}")  # fmt: skip
    built = build(load_scenario("warehouse_shift", [
        "robots=[{name: amr, model: mobile_robot, start: {random: 20, at: parking_spot}}, "
        + tug + "]",
    ]))  # fmt: skip
    with built.sim as sim:
        from fleetsim.behavior import Behaviors

        trees = Behaviors.of(sim)
        trees.batteries.params = BatteryParams(drain_per_m=0.002)  # (a tug that tires soon)
        finished: list[dict[str, object]] = []
        sim.on("behavior_finished", lambda _sim, row: finished.append(row))
        minute = [0.0]

        def report(*_: object) -> None:
            if sim.sim_time >= minute[0] + 60 - 1e-9:
                minute[0] += 60
                print(f"minute {minute[0] / 60:4.0f}: {len(sim.people.crowd):3d} pickers on the "
                      f"floor, tug battery {trees.batteries.percent[0]:5.1f}%")  # fmt: skip

        sim.on("post_step", report)
        summary = run_scenario(built, duration=args.steps * sim.params.timestep)
        k = summary.kpis
        print(f"trees: {k['trees']} ({k['trees_running']} running, {k['trees_succeeded']} "
              f"succeeded, {k['trees_failed']} failed), {k['tree_ticks']} ticks")  # fmt: skip
        print(f"pickers who finished their shift: {sum(r['kind'] == 'person' for r in finished)}"
              f"; robot-person contacts: {k['person_contacts']}")  # fmt: skip
        print(f"simulated {sim.sim_time:.2f} s in {sim.step_count} steps")


if __name__ == "__main__":
    main()
