"""A master control in 20 lines driving simulated robots over VDA 5050.

Starts the embedded MQTT broker on 127.0.0.1, makes three robots VDA 5050 vehicles, and runs a
tiny master control (paho-mqtt) that sends each vehicle an order out along a row of nodes,
picking a load at the first and dropping it at the last, and, when its state says it arrived
and its actions finished, an order back. Needs `pip install "fleetsim[vda5050]"`.
    python examples/08_vda5050_master/main.py              # 5 simulated minutes
    python examples/08_vda5050_master/main.py --steps 300
While it runs: mosquitto_sub -h 127.0.0.1 -p PORT -t 'uagv/v2/fleetsim/#' -v
"""

from __future__ import annotations

import argparse
import json
import time

import paho.mqtt.client as mqtt

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.vda5050.broker import EmbeddedBroker
from fleetsim.interfaces.vda5050.fleet import VdaFleet


class MasterControl:
    """Out along y = row and back, over and over; counts the trips each vehicle finished."""

    def __init__(self, host: str, port: int) -> None:
        self.trips: dict[str, int] = {}
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="master")
        self.client.on_message = lambda _c, _u, m: self.on_state(json.loads(m.payload))
        self.client.connect(host, port)
        self.client.subscribe("uagv/v2/fleetsim/+/state")
        self.client.loop_start()

    def on_state(self, s: dict) -> None:
        busy = [a for a in s["actionStates"] if a["actionStatus"] not in ("FINISHED", "FAILED")]
        if s["nodeStates"] or s["driving"] or busy:  # still on its way, or working
            return
        serial, n = s["serialNumber"], self.trips.get(s["serialNumber"], -1) + 1
        self.trips[serial] = n
        xs = [0.0, 4.0, 8.0] if n % 2 == 0 else [8.0, 4.0, 0.0]
        y = 3.0 * int(serial.split("_")[1])
        nodes = [
            {
                "nodeId": f"p{x:.0f}_{y:.0f}",
                "sequenceId": 2 * k,
                "released": True,
                "actions": [],
                "nodePosition": {"x": x, "y": y, "mapId": "site"},
            }
            for k, x in enumerate(xs)
        ]
        for node, kind in ((nodes[0], "pick"), (nodes[-1], "drop")):  # a load out and back
            node["actions"] = [
                {"actionType": kind, "actionId": f"{serial}-{n}-{kind}", "blockingType": "HARD"}
            ]
        edges = [
            {
                "edgeId": f"e{k}",
                "sequenceId": 2 * k + 1,
                "released": True,
                "actions": [],
                "startNodeId": nodes[k]["nodeId"],
                "endNodeId": nodes[k + 1]["nodeId"],
            }
            for k in range(len(nodes) - 1)
        ]
        order = {
            "headerId": n,
            "timestamp": s["timestamp"],
            "version": "2.0.0",
            "manufacturer": "fleetsim",
            "serialNumber": serial,
            "orderId": f"{serial}-{n}",
            "orderUpdateId": 0,
            "nodes": nodes,
            "edges": edges,
        }
        self.client.publish(f"uagv/v2/fleetsim/{serial}/order", json.dumps(order))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps of 0.1 s")
    args = parser.parse_args()
    with EmbeddedBroker() as broker:
        print(f"broker {broker.url}")
        params = SimulationParams(timestep=0.1, target_rtf=0.0, collision_narrowphase="aabb")
        with MultiRobotSimulationCore(params) as sim:
            robots = [
                Agent.from_urdf(
                    "mobile_robot", Pose.from_xyz(0, 3.0 * k, 0), sim_core=sim, name=f"amr_{k}"
                )
                for k in range(3)
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
