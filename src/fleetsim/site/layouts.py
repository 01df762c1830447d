"""Generated sites: a warehouse of racks and aisles, sized by a few numbers.

`warehouse_layout(aisles=10)` builds racks (static boxes) with one-lane aisles between them, a
cross lane along the bottom and the top joining the aisles (and one between each two blocks of
racks, `blocks=2` or more), pick faces in the aisles (flag `pickup`), drop-off stations above
the top cross lane (`dropoff`; each on a one-way loop off the lane, entered and left in its
direction, so a robot working there does not block the lane; on a spur when two-way), and a
parking lot below the bottom one: columns of parking spots (`parking_spot`), the first row of
which are chargers (`charger`). Aisles and cross lanes are one-way (aisles alternate up and
down, the bottom cross lane runs right, the top one left) unless `one_way=False`. Nodes are
named after what they are: `aisle3_5` (aisle 3, fifth node up, counted from the bottom through
every block), `top_7`, `bottom_7`, `cross1_7` (cross-lane nodes, counted from the left; `cross1`
is the first lane between blocks), `drop_2`, `park_4_1` (column 4, one spot down; the first row
is also a charger).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.memory import check_site_fits
from fleetsim.site.graph import NavGraph
from fleetsim.site.site import Obstacles, Site

BYTES_PER_LAYOUT_NODE = 2_000  # node and lane dicts, then the graph's arrays


@dataclass(frozen=True)
class WarehouseLayout:
    """The numbers of a generated warehouse (metres)."""

    aisles: int = 10
    aisle_length: float = 20.0  # along y, between the cross lanes
    blocks: int = 1  # blocks of racks stacked along y, a cross lane between each two
    node_spacing: float = 2.0  # between nodes along the aisles
    aisle_width: float = 2.0  # free width of an aisle, between rack faces
    rack_depth: float = 1.2
    rack_height: float = 2.0
    rack_margin: float = 1.5  # free space between a rack's end and a cross lane
    stations: int | None = None  # drop-off stations above the top cross lane (default: 5)
    parking_rows: int = 3  # parking spots under each bottom cross-lane node (first: chargers)
    spur: float = 2.5  # length of the lanes out to stations and between parking rows
    speed_limit: float = math.inf  # on every lane (m/s)
    one_way: bool = True  # aisles alternate up and down; bottom lane runs right, top left

    def check(self) -> None:
        """A `ConfigError` naming the first number that does not fit (counts, sizes)."""
        for name in ("aisles", "blocks"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ConfigError(f"warehouse {name} must be a whole number >= 1, got {value!r}")
        for name in (
            "aisle_length",
            "node_spacing",
            "aisle_width",
            "rack_depth",
            "rack_height",
            "spur",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"warehouse {name} must be > 0 m, got {value!r}")
        if self.aisle_length < 2 * self.rack_margin + self.node_spacing:
            raise ConfigError(
                f"warehouse aisle_length {self.aisle_length} m leaves no rack between the cross "
                f"lanes (rack_margin {self.rack_margin} m at each end)"
            )
        if self.station_count < 0 or self.parking_rows < 0:
            raise ConfigError("warehouse stations and parking_rows must be >= 0")
        if self.station_count > self.most_stations:
            raise ConfigError(
                f"warehouse stations: {self.stations} do not fit above {self.aisles} aisles "
                f"(at most {self.most_stations}); add aisles or use fewer stations"
            )

    @property
    def most_stations(self) -> int:
        """Station loops take two cross-lane nodes each; spurs one."""
        cross = 2 * self.aisles - 1
        return cross - 1 if self.one_way and self.aisles > 1 else cross

    @property
    def station_count(self) -> int:
        """The drop-off stations: as asked, else up to five (as many as fit)."""
        return min(5, self.most_stations) if self.stations is None else self.stations

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
    steps = max(1, round(w.aisle_length / w.node_spacing))
    estimate = (
        w.aisles * (w.blocks * (steps + 1))
        + (2 * w.aisles) * (w.blocks + 1)
        + (2 * w.aisles) * w.parking_rows
        + w.station_count
    )
    what = (
        f"warehouse layout (aisles {w.aisles:,} x blocks {w.blocks:,} x {steps + 1:,} "
        f"nodes an aisle, from aisle_length {w.aisle_length:g} / node_spacing "
        f"{w.node_spacing:g}; parking_rows {w.parking_rows:,})"
    )
    check_site_fits(estimate, what, BYTES_PER_LAYOUT_NODE)  # before building
    nodes: list[dict[str, Any]] = []
    lanes: list[dict[str, Any]] = []

    def node(name: str, x: float, y: float, **flags: Any) -> str:
        nodes.append({"name": name, "x": round(x, 6), "y": round(y, 6), **flags})
        return name

    def lane(a: str, b: str, one_way: bool = False) -> None:
        lanes.append({"from": a, "to": b, "bidirectional": not one_way, **_limit(w.speed_limit)})

    length = steps * w.node_spacing
    rows = [
        ("bottom" if r == 0 else "top" if r == w.blocks else f"cross{r}", r * length)
        for r in range(w.blocks + 1)
    ]
    # Cross-lane nodes: one at every aisle and one half-way between (in front of each rack).
    xs = [k * w.pitch / 2 for k in range(2 * w.aisles - 1)]
    for r, (row, y) in enumerate(rows):
        names = [node(f"{row}_{k}", x, y) for k, x in enumerate(xs)]
        # The bottom lane runs right and the top one left (so the corners are never dead
        # ends); the lanes between alternate, right-to-left first.
        if w.one_way and (row == "top" or (row != "bottom" and r % 2 == 1)):
            names.reverse()
        for a, b in itertools.pairwise(names):
            lane(a, b, one_way=w.one_way)
    for k in range(w.aisles):
        x = k * w.pitch
        chain = []
        for r, (row, _) in enumerate(rows):
            chain.append(f"{row}_{2 * k}")
            if r < w.blocks:
                for j in range(r * steps + 1, (r + 1) * steps):
                    chain.append(node(f"aisle{k}_{j}", x, j * w.node_spacing, pickup=True))
        # Circulation: the rightmost aisle goes up, then they alternate; a leftmost aisle that
        # would go up too stays two-way, so the top lane always has a way down at its end.
        up = (w.aisles - 1 - k) % 2 == 0
        directed = w.one_way and w.aisles > 1 and not (k == 0 and up)
        if directed and not up:
            chain.reverse()
        for a, b in itertools.pairwise(chain):
            lane(a, b, one_way=directed)
    length *= w.blocks
    loops = w.one_way and w.aisles > 1
    for s in range(w.station_count):  # spread along the top
        if loops:  # a one-way loop off the top lane: a robot working there does not block it
            k = round((s + 0.5) * (len(xs) - 1) / w.station_count - 0.5)
            name = node(
                f"drop_{s}", (xs[k] + xs[k + 1]) / 2, length + w.spur, dropoff=True, yaw=math.pi
            )
            lane(f"top_{k + 1}", name, one_way=True)
            lane(name, f"top_{k}", one_way=True)
        else:  # on a spur
            k = round((s + 0.5) * len(xs) / w.station_count - 0.5)
            name = node(f"drop_{s}", xs[k], length + w.spur, dropoff=True, yaw=math.pi / 2)
            lane(f"top_{k}", name)
    for k, x in enumerate(xs):  # parking columns under the bottom cross lane
        above = f"bottom_{k}"
        for r in range(1, w.parking_rows + 1):
            name = node(
                f"park_{k}_{r}", x, -r * w.spur, parking_spot=True, charger=r == 1, yaw=-math.pi / 2
            )
            lane(above, name)
            above = name
    graph = NavGraph.from_lists(nodes, lanes)
    return Site(graph, _racks(w, length), source="warehouse layout")


def _racks(w: WarehouseLayout, length: float) -> Obstacles:
    """A rack either side of every aisle in every block (aisles + 1 racks a block), clear of
    the cross lanes."""
    block = length / w.blocks
    x = np.tile((np.arange(w.aisles + 1) - 0.5) * w.pitch, w.blocks)
    y = np.repeat(np.arange(w.blocks) * block + block / 2, w.aisles + 1)
    count = len(x)
    centres = np.column_stack((x, y, np.full(count, w.rack_height / 2)))
    halves = np.column_stack(
        (
            np.full(count, w.rack_depth / 2),
            np.full(count, block / 2 - w.rack_margin),
            np.full(count, w.rack_height / 2),
        )
    )
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
