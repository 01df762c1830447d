"""Record POGEMA's own run as a trace for tests/rl/test_pogema.py: random maps, agents and
actions, each step's observations as bit masks. Run with POGEMA's Python, in its own virtual
environment (it pins old pydantic and gymnasium):

    python -m venv /tmp/pogema && /tmp/pogema/bin/pip install pogema
    /tmp/pogema/bin/python tools/pogema_trace.py > tests/rl/data/pogema_trace.json
"""

from __future__ import annotations

import base64
import json
import zlib

import numpy as np
from pogema import GridConfig, pogema_v0


def trace(seed: int, size: int, agents: int, radius: int, collisions: str, steps: int) -> dict:
    rng = np.random.default_rng(seed)
    blocked = rng.random((size, size)) < 0.2
    text = "\n".join("".join("#" if b else "." for b in row) for row in blocked)
    free = np.argwhere(~blocked)
    picks = rng.choice(len(free), 2 * agents, replace=False)
    starts, goals = free[picks[:agents]].tolist(), free[picks[agents:]].tolist()
    config = GridConfig(map=text, num_agents=agents, obs_radius=radius, agents_xy=starts,
                        targets_xy=goals, on_target="nothing", max_episode_steps=steps + 1,
                        collision_system=collisions, seed=seed)  # fmt: skip
    env = pogema_v0(grid_config=config)
    obs, _ = env.reset(seed=seed)
    record = {"map": text, "starts": starts, "goals": goals, "radius": radius,
              "collisions": collisions, "actions": [], "observations": ""}  # fmt: skip
    seen = [np.array(obs, dtype=np.uint8)]
    for _ in range(steps):
        actions = rng.integers(0, 5, agents).tolist()
        obs, *_ = env.step(actions)
        record["actions"].append(actions)
        seen.append(np.array(obs, dtype=np.uint8))
    # every step's observations, (steps + 1, agents, 3, k, k) bits, zlib, base64
    packed = np.packbits(np.stack(seen)).tobytes()
    record["observations"] = base64.b64encode(zlib.compress(packed, 9)).decode()
    return record


if __name__ == "__main__":
    import pogema

    print(json.dumps({
        "pogema": pogema.__version__,
        "traces": [trace(1, 16, 24, 5, "block_both", 150), trace(2, 12, 30, 3, "block_both", 150),
                   trace(3, 16, 24, 5, "priority", 150)],
    }))  # fmt: skip
