"""The grid task is POGEMA's: given the same map, starts and goals and the same actions,
every agent's observation equals POGEMA's own at every step, bit for bit (under its
`block_both` and `priority` collision systems, ours of the same names). The traces were
recorded from POGEMA 1.4.0 in its own environment by tools/pogema_trace.py (it cannot share
ours: it pins old pydantic and gymnasium)."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from fleetsim.rl import GridConfig, GridFleet

TRACES = json.loads((Path(__file__).parent / "data" / "pogema_trace.json").read_text())
OURS = {"block_both": "block_both", "priority": "priority"}


@pytest.mark.parametrize("k", range(len(TRACES["traces"])))
def test_observations_equal_pogemas_every_step(k: int) -> None:
    trace = TRACES["traces"][k]
    blocked = np.array([[c == "#" for c in row] for row in trace["map"].split("\n")])
    agents, radius = len(trace["starts"]), trace["radius"]
    side = 2 * radius + 1
    steps = len(trace["actions"]) + 1
    bits = np.frombuffer(zlib.decompress(base64.b64decode(trace["observations"])), dtype=np.uint8)
    theirs = np.unpackbits(bits)[: steps * agents * 3 * side * side].reshape(
        steps, agents, 3, side, side
    )
    config = GridConfig(agents=agents, obs_radius=radius, collisions=OURS[trace["collisions"]],
                        lifelong=True, max_steps=10**6)  # fmt: skip
    fleet = GridFleet(blocked, config)
    fleet.reset(seed=0)
    fleet.positions, fleet.goals = np.array(trace["starts"]), np.array(trace["goals"])
    goals = fleet.goals.copy()  # (POGEMA's on_target="nothing": goals stay where they are)
    np.testing.assert_array_equal(fleet.observe(), theirs[0])
    moved = 0
    for step, actions in enumerate(trace["actions"], start=1):
        before = fleet.positions
        fleet.step(np.array(actions))
        fleet.goals = goals
        moved += int((fleet.positions != before).any(axis=1).sum())
        np.testing.assert_array_equal(fleet.observe(), theirs[step], err_msg=f"step {step}")
    assert moved > agents  # (the agents moved: a trace of waits would prove little)
