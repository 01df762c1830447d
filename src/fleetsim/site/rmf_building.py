"""Open-RMF traffic-editor buildings (`.building.yaml`): one level's navigation graph and walls.

Used fields, per level: `vertices` ([x, y, z, name, {params}]), `measurements` ([a, b,
{distance: [3, metres]}]) for the scale, `lanes` ([a, b, {bidirectional, speed_limit, mutex,
graph_idx}]), `walls` ([a, b, {texture_height}]); vertex params `is_charger`, `is_parking_spot`,
`is_holding_point`, `pickup_dispenser`, `dropoff_ingestor`, `spawn_robot_name`,
`spawn_robot_type`, `dock_name`; `doors` ([a, b, {name, type}]: where each door is, so lanes
through it can name it); the top-level `building_name` (or `name`) and `coordinate_system`.
Ignored: lifts, floors, models, layers, features, constraints, crowd_sim, lane `orientation`,
level elevation. A vertex without a name is node `v<index>` (node names are unique) and is
listed in `unnamed`, so exports can give it an empty name as RMF does.

Coordinates: with `coordinate_system: reference_image` (or none) vertices are image pixels,
metres per pixel is the mean of the measurements' distance / pixel length, and image y points
down, so a vertex at pixel (x, y) is at (x * scale, -y * scale) m, as RMF's map generator puts
it; with `cartesian_meters` they are metres already. Parameters are [type, value] pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, closest, is_finite_number
from fleetsim.site.graph import NavGraph
from fleetsim.yaml_source import key_path, line_of, parse_bounded

FLAGS = {
    "is_charger": "charger",
    "is_parking_spot": "parking_spot",
    "is_holding_point": "holding_point",
}
NAMED = {"pickup_dispenser": "pickup", "dropoff_ingestor": "dropoff"}
WALL_HEIGHT_M = 2.5


@dataclass
class Spawn:
    """A robot the building places at a vertex (`spawn_robot_name` / `spawn_robot_type`)."""

    robot_name: str
    robot_type: str
    node: str


@dataclass
class Door:
    """A door of a level: its name, type (hinged, sliding, double_hinged, double_sliding) and
    its two end points (m)."""

    name: str
    kind: str
    ends: np.ndarray  # (2, 2)
    level: str


@dataclass
class BuildingSite:
    """One level of a building: its graph, walls (K, 4) [x0, y0, x1, y1] m with their heights,
    robots to spawn, docks by node, and the scale used (m per pixel; 1 for metric files)."""

    level: str
    graph: NavGraph
    walls: np.ndarray
    wall_heights: np.ndarray
    spawns: list[Spawn] = field(default_factory=list)
    docks: dict[str, str] = field(default_factory=dict)
    scale: float = 1.0
    name: str = ""  # the building's name, as RMF reads it
    doors: list[Door] = field(default_factory=list)
    unnamed: frozenset[str] = frozenset()  # nodes whose vertex has no name


def load_rmf_building(
    path: str | Path, level: str | None = None, graph_idx: int = 0
) -> BuildingSite:
    """Read one level (default: the first) and one navigation graph (default 0)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"building file not found: {path}")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it as text ({exc})") from None
    data = parse_bounded(text, file)  # (nesting bounded: a line, not a RecursionError)
    levels = data.get("levels") if isinstance(data, dict) else None
    if not isinstance(levels, dict) or not levels:
        raise ConfigError(f"{file}: not a traffic-editor building (no 'levels')")
    name = level if level is not None else next(iter(levels))
    if name not in levels:
        guess = closest(str(name), [str(k) for k in levels])
        hint = f"did you mean '{guess}'?" if guess else f"levels: {', '.join(map(str, levels))}"
        raise ConfigError(f"{file}: no level '{name}': {hint}")
    where = f"{file} level {name}"
    spec = levels[name] or {}
    if not isinstance(spec, dict):
        raise ConfigError(f"{_at(file, text, 'levels', name)}: expected a mapping of "
                          "vertices, lanes, walls, ...")  # fmt: skip
    for key in ("vertices", "lanes", "walls", "measurements", "doors"):
        if spec.get(key) is not None and not isinstance(spec[key], list):
            raise ConfigError(f"{_at(file, text, 'levels', name, key)}: expected a list, got "
                              f"{type(spec[key]).__name__} {spec[key]!r:.40}")  # fmt: skip
    vertices = spec.get("vertices") or []
    for k, v in enumerate(vertices):
        if not (isinstance(v, list) and len(v) >= 2 and all(is_finite_number(c) for c in v[:2])):
            at = _at(file, text, "levels", name, "vertices", k)
            raise ConfigError(f"{at}: expected [x, y, z, name, {{params}}] with numbers x and y, "
                              f"got {v!r:.60}")  # fmt: skip
    for key in ("lanes", "walls", "measurements", "doors"):
        for k, edge in enumerate(spec.get(key) or []):
            if not (isinstance(edge, list) and len(edge) >= 2):
                raise ConfigError(f"{_at(file, text, 'levels', name, key, k)}: expected "
                                  f"[vertex, vertex, {{params}}], got {edge!r:.60}")  # fmt: skip
    pixels = np.array([[float(v[0]), float(v[1])] for v in vertices]).reshape(-1, 2)
    system = data.get("coordinate_system", "reference_image")
    if system == "cartesian_meters":
        scale, xy = 1.0, pixels
    elif system == "reference_image":
        scale = _scale(spec.get("measurements") or [], pixels, where)
        xy = pixels * (scale, -scale)
    else:
        raise ConfigError(
            f"{file}: coordinate_system '{system}' (fleetsim reads reference_image and "
            "cartesian_meters)"
        )
    site = _graph(vertices, xy, spec.get("lanes") or [], graph_idx, str(name), where)
    site.scale = scale
    site.walls, site.wall_heights = _walls(spec.get("walls") or [], xy, where)
    site.doors = _doors(spec.get("doors") or [], xy, str(name), where)
    site.name = str(data.get("building_name") or data.get("name") or file.name.split(".")[0])
    return site


def _at(file: Path, text: str, *keys: str | int) -> str:
    """`file line N: levels.L1.vertices[3]` for messages."""
    line = line_of(text, keys)
    return f"{file}{f' line {line}' if line else ''}: {key_path(keys)}"


def _param(params: Any, key: str, default: Any = None) -> Any:
    """The value of a [type, value] parameter."""
    if isinstance(params, dict) and isinstance(params.get(key), list) and params[key][1:]:
        return params[key][1]
    return default


def _vertex(vertices: list[Any], k: Any, where: str, what: str) -> int:
    if not isinstance(k, int) or not 0 <= k < len(vertices):
        raise ConfigError(f"{where}: {what} names vertex {k!r}, but there are {len(vertices)}")
    return k


def _scale(measurements: list[Any], pixels: np.ndarray, where: str) -> float:
    ratios = []
    for j, m in enumerate(measurements):
        a = _vertex(list(pixels), m[0], where, f"measurements[{j}]")
        b = _vertex(list(pixels), m[1], where, f"measurements[{j}]")
        length = float(np.hypot(*(pixels[b] - pixels[a])))
        distance = _param(m[2] if len(m) > 2 else {}, "distance")
        if not distance or length <= 0:
            raise ConfigError(f"{where}: measurements[{j}] needs a distance and two vertices apart")
        ratios.append(float(distance) / length)
    if not ratios:
        raise ConfigError(
            f"{where}: no measurements, so the scale (metres per pixel) is unknown; add a "
            "measurement in traffic-editor"
        )
    return float(np.mean(ratios))


def _graph(
    vertices: list[Any], xy: np.ndarray, lanes: list[Any], graph_idx: int, level: str, where: str
) -> BuildingSite:
    chosen = [
        (j, lane) for j, lane in enumerate(lanes) if int(_param(lane[2] if len(lane) > 2 else {},
                                                                 "graph_idx", 0)) == graph_idx
    ]  # fmt: skip
    used = sorted({_vertex(vertices, lane[e], where, f"lanes[{j}]") for j, lane in chosen
                   for e in (0, 1)})  # fmt: skip
    if not used:
        raise ConfigError(f"{where}: no lanes in graph {graph_idx}")
    node_of = {v: k for k, v in enumerate(used)}
    names: list[str] = []
    seen: dict[str, int] = {}
    flags = {p: np.zeros(len(used), dtype=bool) for p in (*FLAGS.values(), *NAMED.values())}
    spawns: list[Spawn] = []
    docks: dict[str, str] = {}
    unnamed = set()
    for k, v in enumerate(used):
        vertex = vertices[v]
        label = str(vertex[3]) if len(vertex) > 3 and vertex[3] else f"v{v}"
        if not (len(vertex) > 3 and vertex[3]):
            unnamed.add(label)
        if label in seen:
            raise ConfigError(f"{where}: vertices {seen[label]} and {v} are both named '{label}'")
        seen[label] = v
        names.append(label)
        params = vertex[4] if len(vertex) > 4 else {}
        for key, flag in FLAGS.items():
            flags[flag][k] = bool(_param(params, key, False))
        for key, flag in NAMED.items():
            flags[flag][k] = bool(_param(params, key, ""))
        if _param(params, "spawn_robot_name"):
            robot_type = str(_param(params, "spawn_robot_type", ""))
            spawns.append(Spawn(str(_param(params, "spawn_robot_name")), robot_type, label))
        if _param(params, "dock_name"):
            docks[label] = str(_param(params, "dock_name"))
    src = np.array([node_of[lane[0]] for _, lane in chosen], dtype=np.int64)
    dst = np.array([node_of[lane[1]] for _, lane in chosen], dtype=np.int64)
    params = [lane[2] if len(lane) > 2 else {} for _, lane in chosen]
    speed = np.array([float(_param(p, "speed_limit", 0) or 0) for p in params])
    groups: dict[str, int] = {}
    mutex = [groups.setdefault(g, len(groups)) if (g := str(_param(p, "mutex", "") or "")) else -1
             for p in params]  # fmt: skip
    graph = NavGraph(
        names,
        xy[used],
        src,
        dst,
        level=[level] * len(used),
        properties=flags,
        bidirectional=np.array([bool(_param(p, "bidirectional", False)) for p in params]),
        speed_limit=np.where(speed > 0, speed, np.inf),
        mutex=np.array(mutex, dtype=np.int64),
    )
    return BuildingSite(level, graph, np.empty((0, 4)), np.empty(0), spawns, docks,
                        unnamed=frozenset(unnamed))  # fmt: skip


def _walls(walls: list[Any], xy: np.ndarray, where: str) -> tuple[np.ndarray, np.ndarray]:
    ends = [
        (
            _vertex(list(xy), w[0], where, f"walls[{j}]"),
            _vertex(list(xy), w[1], where, f"walls[{j}]"),
        )
        for j, w in enumerate(walls)
    ]
    segments = np.array([[*xy[a], *xy[b]] for a, b in ends]).reshape(-1, 4)
    heights = np.array(
        [float(_param(w[2] if len(w) > 2 else {}, "texture_height", WALL_HEIGHT_M)) for w in walls]
    )
    return segments, heights


def _doors(doors: list[Any], xy: np.ndarray, level: str, where: str) -> list[Door]:
    out = []
    for j, d in enumerate(doors):
        if not isinstance(d, list) or len(d) < 2:
            raise ConfigError(f"{where}: doors[{j}]: expected [vertex, vertex, {{name, type}}]")
        a = _vertex(list(xy), d[0], where, f"doors[{j}]")
        b = _vertex(list(xy), d[1], where, f"doors[{j}]")
        params = d[2] if len(d) > 2 else {}
        name = str(_param(params, "name", "") or f"door_{j}")
        kind = str(_param(params, "type", "hinged") or "hinged")
        out.append(Door(name, kind, np.array([xy[a], xy[b]], dtype=float), level))
    return out
