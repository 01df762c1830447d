"""A master control driving simulated robots over VDA 5050.

Starts the embedded MQTT broker on 127.0.0.1, makes three robots VDA 5050 vehicles, and runs a
tiny master control (`master.py`, paho-mqtt) that sends each vehicle an order out along a row
of nodes, picking a load at the first and dropping it at the last, and, when its state says it
arrived and its actions finished, an order back. Needs `pip install "fleetsim[vda5050]"`.
    python examples/08_vda5050_master/main.py              # 5 simulated minutes
    python examples/08_vda5050_master/main.py --steps 300
While it runs: mosquitto_sub -h 127.0.0.1 -p PORT -t 'uagv/v2/fleetsim/#' -v
"""

from __future__ import annotations

import argparse
import time

from master import MasterControl

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.vda5050.broker import EmbeddedBroker
from fleetsim.interfaces.vda5050.fleet import VdaFleet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps of 0.1 s")
    args = parser.parse_args()
    with EmbeddedBroker() as broker:
        print(f"broker {broker.url}")
        params = SimulationParams(timestep=0.1, target_rtf=0.0, collision_narrowphase="aabb")
        with MultiRobotSimulationCore(params) as sim:
            starts = [Pose.from_xyz(0, 3.0 * k, 0) for k in range(3)]
            robots = [
                Agent.from_urdf("mobile_robot", p, sim_core=sim, name=f"amr_{k}")
                for k, p in enumerate(starts)
            ]
            fleet = VdaFleet(sim, robots, broker.url).start()
            master = MasterControl(broker.host, broker.port)
            for _ in range(args.steps):
                sim.step_once()
                time.sleep(0.001)  # as fast as it goes, yet the network gets its turn
            fleet.stop()
            master.client.loop_stop()
            print(f"simulated {sim.sim_time:.2f} s in {args.steps} steps")
            print("trips finished:", {s: max(n, 0) for s, n in sorted(master.trips.items())})


if __name__ == "__main__":
    main()
