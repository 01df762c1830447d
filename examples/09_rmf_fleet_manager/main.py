"""An RMF-style client driving simulated robots through fleetsim's fleet-manager API.

Serves three robots behind the `rmf_demos_fm` REST endpoints (FastAPI + uvicorn on 127.0.0.1),
and plays the part of RMF's fleet adapter: it polls `status/`, sends each idle robot to the
next corner of its square with `navigate/` and a fresh `cmd_id`, and counts the commands the
robots report as completed. Needs `pip install "fleetsim[rmf]"`.
    python examples/09_rmf_fleet_manager/main.py              # 60 simulated seconds
    python examples/09_rmf_fleet_manager/main.py --steps 300
While it runs: curl http://127.0.0.1:PORT/open-rmf/rmf_demos_fm/status/
"""

from __future__ import annotations

import argparse
import json
import urllib.request

from fleetsim import Agent, MultiRobotSimulationCore, Pose, SimulationParams
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.server import RmfServer, make_app

CORNERS = [(3.0, 0.0, 1.57), (3.0, 3.0, 3.14), (0.0, 3.0, -1.57), (0.0, 0.0, 0.0)]


class Adapter:
    """What RMF's fleet adapter does, in miniature: poll, then command the idle robots."""

    def __init__(self, url: str) -> None:
        self.url, self.cmd_id, self.sent, self.done = url, 0, {}, 0

    def call(self, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}/{path}", data=data, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def tick(self) -> None:
        for robot in self.call("status/")["all_robots"]:
            name, last = robot["robot_name"], robot["last_completed_request"]
            if name in self.sent and self.sent[name][0] != last:
                continue  # still on its way
            lap = self.sent[name][1] + 1 if name in self.sent else 0
            self.done += name in self.sent
            x, y, yaw = CORNERS[lap % 4]
            self.cmd_id += 1
            goal = {"x": x + 5.0 * int(name[-1]), "y": y, "yaw": yaw}  # robots 5 m apart
            body = {"map_name": "L1", "destination": goal, "speed_limit": 0.0}
            self.call(f"navigate/?robot_name={name}&cmd_id={self.cmd_id}", body)
            self.sent[name] = (self.cmd_id, lap)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="steps of 0.1 s")
    args = parser.parse_args()
    params = SimulationParams(timestep=0.1, target_rtf=0.0, collision_narrowphase="aabb")
    with MultiRobotSimulationCore(params) as sim:
        starts = [Pose.from_xyz(5.0 * k, 0, 0) for k in range(3)]
        robots = [
            Agent.from_urdf("mobile_robot", p, sim_core=sim, name=f"tinyRobot{k}")
            for k, p in enumerate(starts)
        ]
        fleet = RmfFleet(sim, robots, map_name="L1").start()
        with RmfServer(make_app(fleet)) as server:
            print(f"fleet manager {server.url}/")
            adapter = Adapter(server.url)
            for step in range(args.steps):
                if step % 5 == 0:  # the adapter polls every half simulated second
                    adapter.tick()
                sim.step_once()
        fleet.stop_serving()
        print(f"simulated {sim.sim_time:.2f} s in {args.steps} steps")
        print(f"commands completed: {adapter.done}")


if __name__ == "__main__":
    main()
