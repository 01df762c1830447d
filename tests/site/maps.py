"""Small maps the site tests share: a MovingAI grid (`SMALL`) and a graph (`NODES`, `LANES`)."""

from __future__ import annotations

SMALL = """type octile
height 4
width 6
map
..@@..
..@@.T
......
@@@...
"""


NODES = [
    {"name": "dock", "x": 0, "y": 0, "charger": True},
    {"name": "a", "x": 5, "y": 0},
    {"name": "b", "x": 5, "y": 5, "pickup": True},
    {"name": "c", "x": 0, "y": 5, "parking_spot": True, "yaw": 1.57},
    {"name": "island", "x": 50, "y": 50},
]


LANES = [
    {"from": "dock", "to": "a", "speed_limit": 0.5},
    {"from": "a", "to": "b"},
    {"from": "b", "to": "c", "bidirectional": False},  # one way: b -> c only
    {"from": "c", "to": "dock", "mutex": "door"},
]
