"""Building files the tests share: a three-level tower with one lift (`TOWER`), a house with
doors (`HOUSE`), an Open-RMF building (`BUILDING`)."""

from __future__ import annotations

from pathlib import Path

ELEVATIONS = {"L1": 0.0, "L2": 4.0, "L3": 8.0}


def level(name: str, place: str) -> str:
    """A corridor from a parking spot past a place to the lift (at x = 8), metres."""
    return f"""
  {name}:
    elevation: {ELEVATIONS[name]}
    vertices:
      - [0, 3, 0, park_{name}, {{is_parking_spot: [4, true]}}]
      - [0, 0, 0, {place}, {{pickup_dispenser: [1, a], dropoff_ingestor: [1, b]}}]
      - [4, 0, 0, hall_{name}]
      - [8, 0, 0, lift_{name}]
      - [4, 3, 0, park2_{name}, {{is_parking_spot: [4, true]}}]
    lanes:
      - [0, 1, {{bidirectional: [4, true]}}]
      - [1, 2, {{bidirectional: [4, true]}}]
      - [2, 3, {{bidirectional: [4, true]}}]
      - [4, 2, {{bidirectional: [4, true]}}]
"""


TOWER = (
    "coordinate_system: cartesian_meters\nname: tower\nlevels:"
    + level("L1", "dock")
    + level("L2", "ward")
    + level("L3", "lab")
    + """
lifts:
  Lift1:
    x: 8
    y: 0
    yaw: 0
    width: 2.0
    depth: 2.0
    level_doors: {L1: [d], L2: [d], L3: [d]}
    doors: {d: {door_type: 2, x: -1, y: 0, motion_axis_orientation: 1.57, width: 1.2}}
"""
)


HOUSE = """
coordinate_system: cartesian_meters
name: doorhouse
levels:
  L1:
    elevation: 0
    vertices:
      - [0, 0, 0, west, {pickup_dispenser: [1, w]}]
      - [3, 0, 0, ""]
      - [9, 0, 0, ""]
      - [12, 0, 0, east, {dropoff_ingestor: [1, e]}]
      - [6, -1, 0, ""]
      - [6, 1, 0, ""]
      - [6, -6, 0, ""]
      - [6, 6, 0, ""]
      - [0, 3, 0, park_w, {is_parking_spot: [4, true]}]
      - [12, 3, 0, park_e, {is_parking_spot: [4, true]}]
    lanes:
      - [8, 0, {bidirectional: [4, true]}]
      - [0, 1, {bidirectional: [4, true]}]
      - [1, 2, {bidirectional: [4, true]}]
      - [2, 3, {bidirectional: [4, true]}]
      - [3, 9, {bidirectional: [4, true]}]
    walls:
      - [6, 4, {texture_height: [3, 2.0]}]
      - [5, 7, {texture_height: [3, 2.0]}]
    doors:
      - [4, 5, {name: [1, main_door], type: [1, sliding]}]
"""


BUILDING = """
coordinate_system: reference_image
name: test_building
levels:
  L1:
    elevation: 0
    measurements:
      - [0, 1, {distance: [3, 5.0]}]
      - [2, 3, {distance: [3, 10.0]}]
    vertices:
      - [0, 0, 0, ""]
      - [100, 0, 0, ""]
      - [0, 0, 0, ""]
      - [0, 200, 0, ""]
      - [100, 100, 0, dock_a, {is_charger: [4, true], is_parking_spot: [4, true],
                               spawn_robot_name: [1, bot1], spawn_robot_type: [1, TinyRobot],
                               dock_name: [1, dock_a_station]}]
      - [300, 100, 0, ""]
      - [300, 300, 0, pantry, {pickup_dispenser: [1, coke], is_holding_point: [4, true]}]
      - [100, 300, 0, lounge, {dropoff_ingestor: [1, bin]}]
      - [500, 500, 0, other_graph]
    lanes:
      - [4, 5, {bidirectional: [4, true], graph_idx: [2, 0], speed_limit: [3, 0.5]}]
      - [5, 6, {bidirectional: [4, true], graph_idx: [2, 0], speed_limit: [3, 0]}]
      - [6, 7, {bidirectional: [4, false], graph_idx: [2, 0], mutex: [1, door_1]}]
      - [7, 4, {bidirectional: [4, true], graph_idx: [2, 0]}]
      - [6, 8, {bidirectional: [4, true], graph_idx: [2, 1]}]
    walls:
      - [0, 1, {texture_height: [3, 2.0]}]
      - [1, 5, {}]
  L2:
    vertices: []
"""


def write_scenario(tower: Path) -> Path:
    places = [("dock", "lab"), ("ward", "dock"), ("lab", "ward"), ("dock", "ward")]
    tasks = [
        {"id": f"t{k}", "pickup": a, "dropoff": b, "release_time": 10 * k}
        for k, (a, b) in enumerate(places)
    ]
    path = tower.parent / "floors.yaml"
    path.write_text(
        "\n".join(
            [
                "simulation: {timestep: 0.1, target_rtf: 0, duration: 900, seed: 2}",
                f"site: {{file: {tower.name}}}",
                "robots:",
                "  - {name: amr, model: mobile_robot, start: [park_L1, park_L2]}",
                "plugins:",
                "  - type: fleet_manager",
                "    params:",
                "      pick_time: 1",
                "      drop_time: 1",
                f"      tasks: {{list: {tasks}}}",
            ]
        ).replace("'", '"')
        + "\n"
    )
    return path
