"""Generated sites: a warehouse of racks and aisles, sized by a few numbers.

`warehouse_layout(aisles=10)` builds racks (static boxes) with one-lane aisles between them, a
cross lane along the bottom and the top joining the aisles, pick faces in the aisles (flag
`pickup`), drop-off stations above the top cross lane (`dropoff`), and a parking lot below the
bottom one: columns of parking spots (`parking_spot`), the first row of which are chargers
(`charger`). Every lane is two-way. Nodes are named after what they are: `aisle3_5` (aisle 3,
fifth node up), `top_7`, `bottom_7` (cross-lane nodes, counted from the left), `drop_2`,
`park_4_1` (column 4, one spot down; the first row is also a charger).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site.graph import NavGraph
from fleetsim.site.site import Obstacles, Site


@dataclass(frozen=True)
class WarehouseLayout:
    """The numbers of a generated warehouse (metres)."""

    aisles: int = 10
    aisle_length: float = 20.0  # along y, between the cross lanes
    node_spacing: float = 2.0  # between nodes along the aisles
    aisle_width: float = 2.0  # free width of an aisle, between rack faces
    rack_depth: float = 1.2
    rack_height: float = 2.0
    rack_margin: float = 1.5  # free space between a rack's end and a cross lane
    stations: int = 5  # drop-off stations above the top cross lane
    parking_rows: int = 3  # parking spots under each bottom cross-lane node (first: chargers)
    spur: float = 2.5  # length of the lanes out to stations and between parking rows
    speed_limit: float = math.inf  # on every lane (m/s)
    one_way: bool = True  # aisles alternate up and down; bottom lane runs right, top left

    def check(self) -> None:
        if not (isinstance(self.aisles, int) and self.aisles >= 1):
            raise ConfigError(f"warehouse aisles must be a whole number >= 1, got {self.aisles!r}")
        for name in ("aisle_length", "node_spacing", "aisle_width", "rack_depth", "rack_height",
                     "spur"):  # fmt: skip
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"warehouse {name} must be > 0 m, got {value!r}")
        if self.aisle_length < 2 * self.rack_margin + self.node_spacing:
            raise ConfigError(
                f"warehouse aisle_length {self.aisle_length} m leaves no rack between the cross "
                f"lanes (rack_margin {self.rack_margin} m at each end)"
            )
        if self.stations < 0 or self.parking_rows < 0:
            raise ConfigError("warehouse stations and parking_rows must be >= 0")

    @property
    def pitch(self) -> float:
        """Centre-to-centre distance of neighbouring aisles."""
        return self.aisle_width + self.rack_depth


def warehouse_layout(**numbers: Any) -> Site:
    """A generated warehouse site (see the module and `WarehouseLayout` for the numbers)."""
    try:
        w = WarehouseLayout(**numbers)
    except TypeError as exc:
        known = ", ".join(WarehouseLayout.__dataclass_fields__)
        raise ConfigError(f"warehouse layout: {exc} (known: {known})") from None
    w.check()
    nodes: list[dict[str, Any]] = []
    lanes: list[dict[str, Any]] = []

    def node(name: str, x: float, y: float, **flags: Any) -> str:
        nodes.append({"name": name, "x": round(x, 6), "y": round(y, 6), **flags})
        return name

    def lane(a: str, b: str, one_way: bool = False) -> None:
        lanes.append({"from": a, "to": b, "bidirectional": not one_way, **_limit(w.speed_limit)})

    steps = max(1, round(w.aisle_length / w.node_spacing))
    length = steps * w.node_spacing
    # Cross-lane nodes: one at every aisle and one half-way between (in front of each rack).
    xs = [k * w.pitch / 2 for k in range(2 * w.aisles - 1)]
    for row, y in (("bottom", 0.0), ("top", length)):
        names = [node(f"{row}_{k}", x, y) for k, x in enumerate(xs)]
        if row == "top" and w.one_way:
            names.reverse()  # the top lane runs right to left
        for a, b in itertools.pairwise(names):
            lane(a, b, one_way=w.one_way)
    for k in range(w.aisles):
        x = k * w.pitch
        chain = [f"bottom_{2 * k}"]
        for j in range(1, steps):
            chain.append(node(f"aisle{k}_{j}", x, j * w.node_spacing, pickup=True))
        chain.append(f"top_{2 * k}")
        # Circulation: the rightmost aisle goes up, then they alternate; a leftmost aisle that
        # would go up too stays two-way, so the top lane always has a way down at its end.
        up = (w.aisles - 1 - k) % 2 == 0
        directed = w.one_way and w.aisles > 1 and not (k == 0 and up)
        if directed and not up:
            chain.reverse()
        for a, b in itertools.pairwise(chain):
            lane(a, b, one_way=directed)
    for s in range(w.stations):  # spread along the top, each on a spur
        k = round((s + 0.5) * len(xs) / w.stations - 0.5)
        name = node(f"drop_{s}", xs[k], length + w.spur, dropoff=True, yaw=math.pi / 2)
        lane(f"top_{k}", name)
    for k, x in enumerate(xs):  # parking columns under the bottom cross lane
        above = f"bottom_{k}"
        for r in range(1, w.parking_rows + 1):
            name = node(f"park_{k}_{r}", x, -r * w.spur, parking_spot=True, charger=r == 1,
                        yaw=-math.pi / 2)  # fmt: skip
            lane(above, name)
            above = name
    graph = NavGraph.from_lists(nodes, lanes)
    return Site(graph, _racks(w, length), source="warehouse layout")


def _racks(w: WarehouseLayout, length: float) -> Obstacles:
    """A rack either side of every aisle: aisles + 1 racks, clear of the cross lanes."""
    count = w.aisles + 1
    x = (np.arange(count) - 0.5) * w.pitch
    y0, y1 = w.rack_margin, length - w.rack_margin
    centres = np.column_stack((x, np.full(count, (y0 + y1) / 2), np.full(count, w.rack_height / 2)))
    halves = np.column_stack(
        (np.full(count, w.rack_depth / 2), np.full(count, (y1 - y0) / 2),
         np.full(count, w.rack_height / 2))
    )  # fmt: skip
    return Obstacles(centres, halves, np.zeros(count))


def _limit(speed: float) -> dict[str, float]:
    return {} if math.isinf(speed) else {"speed_limit": speed}


LAYOUTS = {"warehouse": warehouse_layout}


def site_layout(spec: dict[str, Any]) -> Site:
    """A generated site from `{type: warehouse, ...numbers}` (a scenario's `site: {layout:}`)."""
    kind = spec.pop("type", None)
    if kind not in LAYOUTS:
        raise ConfigError(f"site layout type must be one of {', '.join(LAYOUTS)}, got {kind!r}")
    return LAYOUTS[kind](**spec)
