"""Property: on any small connected site (a lattice, with spurs to stations, an optional
one-way ring, a row of parking spots with one per robot), any fleet and any orders run to
completion: every task is done, no robot stalls, no two robots touch. Examples are drawn from
a fixed seed (derandomized, no example database), so the suite's time is bounded and a
failure repeats."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fleetsim.fleet import FleetManager, Task
from fleetsim.site import Site

from ..conftest import make_sim
from .helpers import fleet_of

SPACING = 2.5


@st.composite
def depots(draw: Any) -> dict[str, Any]:
    rows, cols = draw(st.integers(2, 4)), draw(st.integers(3, 6))
    ring = rows >= 3 and draw(st.booleans())  # the outer ring one-way (counter-clockwise)
    nodes: list[dict[str, Any]] = []
    lanes: list[dict[str, Any]] = []
    for r in range(rows):
        for c in range(cols):
            nodes.append({"name": f"n{r}_{c}", "x": SPACING * c, "y": SPACING * (r + 1)})

    def outer(a: tuple[int, int], b: tuple[int, int]) -> bool:
        on = [p[0] in (0, rows - 1) or p[1] in (0, cols - 1) for p in (a, b)]
        same_side = (a[0] == b[0] and a[0] in (0, rows - 1)) or (
            a[1] == b[1] and a[1] in (0, cols - 1)
        )
        return all(on) and same_side

    def lane(a: tuple[int, int], b: tuple[int, int]) -> None:
        if ring and outer(a, b):
            # counter-clockwise: east along the bottom, north on the right, west along the
            # top, south on the left
            forward = (
                (a[0] == 0 and b[1] > a[1])
                or (a[1] == cols - 1 and b[0] > a[0])
                or (a[0] == rows - 1 and b[1] < a[1])
                or (a[1] == 0 and b[0] < a[0])
            )
            src, dst = (a, b) if forward else (b, a)
            lanes.append(
                {"from": f"n{src[0]}_{src[1]}", "to": f"n{dst[0]}_{dst[1]}", "bidirectional": False}
            )
        else:
            lanes.append({"from": f"n{a[0]}_{a[1]}", "to": f"n{b[0]}_{b[1]}"})

    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols:
                lane((r, c), (r, c + 1))
            if r + 1 < rows:
                lane((r, c), (r + 1, c))
    stations = []
    for c in draw(st.sets(st.integers(0, cols - 1), min_size=1, max_size=cols)):
        name = f"s{c}"  # a spur above the top row: a station at the end of its lane
        nodes.append({"name": name, "x": SPACING * c, "y": SPACING * (rows + 1)})
        lanes.append({"from": f"n{rows - 1}_{c}", "to": name})
        stations.append(name)
    robots = draw(st.integers(1, min(5, cols)))
    spots = []
    for c in range(cols):  # parking spots below the bottom row, one per column
        name = f"p{c}"
        nodes.append({"name": name, "x": SPACING * c, "y": 0.0, "parking_spot": True})
        lanes.append({"from": name, "to": f"n0_{c}"})
        spots.append(name)
    places = stations + [f"n{r}_{c}" for r in range(1, rows) for c in range(cols)]
    orders = draw(
        st.lists(
            st.tuples(st.sampled_from(places), st.sampled_from(places), st.integers(0, 200)),
            min_size=1,
            max_size=10,
        )
    )
    starts = draw(st.permutations(spots))[:robots]
    return {
        "nodes": nodes,
        "lanes": lanes,
        "starts": starts,
        "orders": [(a, b, t) for a, b, t in orders if a != b] or [(places[0], spots[0], 0)],
        "assignment": draw(st.sampled_from(["nearest", "greedy"])),
    }


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # (a failure is shown as drawn: no shrinking)
    suppress_health_check=[HealthCheck.too_slow],
)
@given(depots())
def test_every_task_finishes_without_a_stall(depot: dict[str, Any]) -> None:
    with make_sim(timestep=0.1, collision_narrowphase="aabb") as sim:
        sim.set_site(Site.from_graph(depot["nodes"], depot["lanes"]))
        robots = fleet_of(sim, *depot["starts"])
        orders = sorted(depot["orders"], key=lambda o: o[2])
        tasks = [Task(f"o{k}", (a, b), release_time=float(t)) for k, (a, b, t) in enumerate(orders)]
        manager = FleetManager(
            sim,
            robots,
            tasks,
            assignment=depot["assignment"],
            pick_time=2.0,
            drop_time=2.0,
            stall_after_s=60.0,
        ).attach()
        for _ in range(30000):  # 3,000 simulated seconds at most
            sim.step_once()
            if len(manager.tasks) == len(tasks) and all(
                t.status.value in ("done", "failed") for t in manager.tasks
            ):
                break
        statuses = {t.id: (t.status.value, t.reason) for t in manager.tasks}
        again = f"the site to run again: {json.dumps(depot)}"
        assert all(s == "done" for s, _ in statuses.values()), (statuses, again)
        assert manager.stalls.records == [], (manager.stalls.records, again)
        assert sim.collision_counts["robot-robot"] == 0
