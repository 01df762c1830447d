"""Write the bundled multi-floor building, `src/fleetsim/scenarios/hospital.building.yaml`.

Three floors 5 m apart, each a ring of two corridors (y = 0 and y = 10, joined at both ends
and in the middle), parking spurs off both corridors (the first on each floor a charger),
three stations on spurs to the north (one behind a sliding door), and a lift at each end,
off the ends' cross links, each entered and left through its own lobby nodes (in one way, out
the other), so a robot leaving the cabin never meets one waiting to board.
    python tools/make_hospital.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).parents[1] / "src/fleetsim/scenarios/hospital.building.yaml"
FLOORS = {"L1": 0.0, "L2": 5.0, "L3": 10.0}
STATIONS = {  # floor -> {corridor index: (name, pickup?, dropoff?)}; the first is behind a door
    "L1": {
        2: ("pharmacy", True, False),
        6: ("kitchen", True, False),
        10: ("reception", False, True),
    },
    "L2": {2: ("lab", True, True), 6: ("ward_2a", False, True), 10: ("ward_2b", False, True)},
    "L3": {2: ("theatre", False, True), 6: ("supply", True, False), 10: ("ward_3a", False, True)},
}
STEP = 2.5
TWO_WAY = {"bidirectional": [4, True], "graph_idx": [2, 0]}
ONE_WAY = {"bidirectional": [4, False], "graph_idx": [2, 0]}


def floor(name: str) -> dict[str, Any]:
    vertices: list[list[Any]] = []
    index: dict[str, int] = {}

    def vertex(key: str, x: float, y: float, label: str = "", **params: Any) -> int:
        index[key] = len(vertices)
        vertices.append([x, y, 0, label, params] if params else [x, y, 0, label])
        return index[key]

    lanes: list[list[Any]] = []

    def lane(a: str, b: str, two_way: bool = True) -> None:
        lanes.append([index[a], index[b], dict(TWO_WAY if two_way else ONE_WAY)])

    for k in range(13):
        vertex(f"c{k}", k * STEP, 0.0, f"{name}_c{k}")
        vertex(f"d{k}", k * STEP, 10.0, f"{name}_d{k}")
    for k in range(12):
        lane(f"c{k}", f"c{k + 1}")
        lane(f"d{k}", f"d{k + 1}")
    for k in (0, 6, 12):
        vertex(f"m{k}", k * STEP, 5.0, f"{name}_m{k}")
        lane(f"c{k}", f"m{k}")
        lane(f"m{k}", f"d{k}")
    spots = 0
    for k in [*range(1, 6), *range(7, 12)]:  # parking south of the south corridor
        flags = {"is_parking_spot": [4, True]}
        if spots == 0:
            flags["is_charger"] = [4, True]
        vertex(f"p{k}", k * STEP, -3.0, f"{name}_park{spots}", **flags)
        lane(f"c{k}", f"p{k}")
        spots += 1
    for k in (1, 3, 4, 5, 7, 8, 9, 11):  # and north of the north corridor
        vertex(f"q{k}", k * STEP, 13.0, f"{name}_park{spots}", is_parking_spot=[4, True])
        lane(f"d{k}", f"q{k}")
        spots += 1
    for k, (station, pickup, dropoff) in STATIONS[name].items():
        params = {}
        if pickup:
            params["pickup_dispenser"] = [1, station]
        if dropoff:
            params["dropoff_ingestor"] = [1, station]
        vertex(f"s{k}", k * STEP, 13.0, station, **params)
        lane(f"d{k}", f"s{k}")
    walls, doors = [], []
    x = 2 * STEP  # the door across the first station's spur, with a wall each side
    for key, (wx, wy) in {
        "w0": (x - 2.0, 11.5),
        "w1": (x - 1.0, 11.5),
        "w2": (x + 1.0, 11.5),
        "w3": (x + 2.0, 11.5),
    }.items():
        vertex(key, wx, wy)
    walls += [
        [index["w0"], index["w1"], {"texture_height": [3, 2.2]}],
        [index["w2"], index["w3"], {"texture_height": [3, 2.2]}],
    ]
    doors.append([index["w1"], index["w2"], {"name": [1, f"{name}_door"], "type": [1, "sliding"]}])
    for lift, junction, x, side in (("LiftA", "m0", -5.0, 1.0), ("LiftB", "m12", 35.0, -1.0)):
        vertex(f"{lift}_in", x + side * 2.5, 3.5, f"{name}_{lift}_in")
        vertex(f"{lift}_cab", x, 5.0, f"{name}_{lift}")
        vertex(f"{lift}_out", x + side * 2.5, 6.5, f"{name}_{lift}_out")
        lane(junction, f"{lift}_in", False)
        lane(f"{lift}_in", f"{lift}_cab", False)
        lane(f"{lift}_cab", f"{lift}_out", False)
        lane(f"{lift}_out", junction, False)
    return {
        "elevation": FLOORS[name],
        "vertices": vertices,
        "lanes": lanes,
        "walls": walls,
        "doors": doors,
    }


def building() -> dict[str, Any]:
    lifts = {
        lift: {
            "x": x,
            "y": 5.0,
            "yaw": 0.0,
            "width": 2.4,
            "depth": 2.4,
            "level_doors": {name: ["door"] for name in FLOORS},
            "doors": {
                "door": {
                    "door_type": 2,
                    "x": -1.2,
                    "y": 0.0,
                    "motion_axis_orientation": 1.5708,
                    "width": 1.6,
                }
            },
            "initial_floor_name": "L1",
        }
        for lift, x in (("LiftA", -5.0), ("LiftB", 35.0))
    }
    return {
        "name": "hospital",
        "coordinate_system": "cartesian_meters",
        "levels": {name: floor(name) for name in FLOORS},
        "lifts": lifts,
    }


def main() -> None:
    header = (
        "# Generated by tools/make_hospital.py (edit that, not this): three floors, two "
        "lifts,\n# a door on each floor; metres, y up.\n"
    )
    OUT.write_text(header + yaml.safe_dump(building(), sort_keys=False, default_flow_style=None))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
