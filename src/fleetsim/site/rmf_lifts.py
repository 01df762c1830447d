"""The lifts of an Open-RMF building file: where each cabin is, the levels it serves and the
doors it opens there, checked as they are read (a cabin of no size, a starting floor it does
not serve, a door it does not have, a door type RMF does not know are errors naming the file,
line and key)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError, is_finite_number
from fleetsim.site.graph import NavGraph
from fleetsim.site.rmf_placement import Placement
from fleetsim.yaml_source import key_path, line_of

LIFT_GAP_M = 0.05  # between a lift's cabin and its shaft, each side (RMF's generator)
LIFT_DOOR_TYPES = range(1, 7)  # RMF's Door.DOOR_TYPE_*: single/double sliding .. swing


@dataclass
class Lift:
    """A lift: its cabin centre (m) and yaw, cabin width and depth (m), the levels it serves
    (in the file's order) with the names of its doors there, and the level it starts on."""

    name: str
    x: float
    y: float
    yaw: float
    width: float
    depth: float
    levels: list[str]
    doors: dict[str, list[str]]
    initial_level: str

    def shaft(self) -> np.ndarray:
        """The shaft's corners (4, 2): the cabin and `LIFT_GAP_M` all round."""
        w, d = self.width / 2 + LIFT_GAP_M, self.depth / 2 + LIFT_GAP_M
        corners: np.ndarray = np.array([[-w, -d], [w, -d], [w, d], [-w, d]]) @ self._turn().T
        corners += (self.x, self.y)
        return corners

    def local(self, xy: Any) -> np.ndarray:
        """Points (N, 2), or one (2,), in the cabin's frame: x along its width, y its depth."""
        out: np.ndarray = (np.asarray(xy, dtype=float).reshape(-1, 2) - (self.x, self.y)) @ (
            self._turn()
        )
        return out

    def world(self, local: Any) -> np.ndarray:
        """Points (N, 2) in the cabin's frame, in the site's (`local`'s inverse)."""
        out: np.ndarray = np.asarray(local, dtype=float).reshape(-1, 2) @ self._turn().T
        out += (self.x, self.y)
        return out

    def contains(self, xy: np.ndarray) -> np.ndarray:
        """Which points (N, 2) lie in the shaft (edges included)."""
        local = self.local(xy)
        w, d = self.width / 2 + LIFT_GAP_M + 1e-9, self.depth / 2 + LIFT_GAP_M + 1e-9
        inside: np.ndarray = (np.abs(local[:, 0]) <= w) & (np.abs(local[:, 1]) <= d)
        return inside

    def _turn(self) -> np.ndarray:
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        return np.array([[c, -s], [s, c]])


def read_lifts(
    file: Path,
    text: str,
    spec: Any,
    placements: dict[str, Placement],
    reference: str,
    levels: dict[str, dict[str, Any]],
    ignored: list[str],
) -> list[Lift]:
    """The building's lifts, checked (errors name the file, line and key)."""
    if not isinstance(spec, dict):
        raise ConfigError(f"{at_line(file, text, 'lifts')}: expected a mapping of lift names")
    out = []
    for name, lift in spec.items():
        where = at_line(file, text, "lifts", name)
        if not isinstance(lift, dict):
            raise ConfigError(f"{where}: expected a mapping (x, y, yaw, width, depth, ...)")
        for key in ("x", "y", "width", "depth"):
            if not is_finite_number(lift.get(key)):
                raise ConfigError(
                    f"{at_line(file, text, 'lifts', name, key)}: expected a number, "
                    f"got {lift.get(key)!r:.40}"
                )
        for key in ("width", "depth"):
            if not float(lift[key]) > 0:
                raise ConfigError(
                    f"{at_line(file, text, 'lifts', name, key)}: the cabin's {key} "
                    f"must be > 0 m, got {lift[key]!r}"
                )
        yaw = lift.get("yaw", 0.0)
        if not is_finite_number(yaw):
            raise ConfigError(f"{where}.yaw: expected radians, got {yaw!r:.40}")
        floor = str(lift.get("reference_floor_name") or reference)
        if floor not in placements:
            raise ConfigError(f"{where}.reference_floor_name: no level '{floor}'")
        x, y = placements[floor].apply(np.array([[lift["x"], lift["y"]]]))[0]
        level_doors = lift.get("level_doors") or {}
        if not isinstance(level_doors, dict):
            raise ConfigError(f"{where}.level_doors: expected level: [door names]")
        unknown = [str(k) for k in level_doors if str(k) not in levels]
        if unknown:
            raise ConfigError(f"{where}.level_doors: no level '{unknown[0]}'")
        served = [str(k) for k in level_doors]
        if not served:
            ignored.append(f"lift {name}: serves no level (no level_doors)")
        doors = {str(k): [str(d) for d in (v or [])] for k, v in level_doors.items()}
        _cabin_doors(file, text, name, lift.get("doors"), doors)
        initial = str(lift.get("initial_floor_name") or (served[0] if served else reference))
        if lift.get("initial_floor_name") is not None and initial not in served:
            at = at_line(file, text, "lifts", name, "initial_floor_name")
            raise ConfigError(
                f"{at}: {initial!r} is not a level lift {name} serves (it "
                f"serves {', '.join(served) or 'none'})"
            )
        out.append(
            Lift(
                str(name),
                float(x),
                float(y),
                float(yaw),
                float(lift["width"]),
                float(lift["depth"]),
                served,
                doors,
                initial,
            )
        )
    return out


def _cabin_doors(
    file: Path, text: str, lift: Any, spec: Any, level_doors: dict[str, list[str]]
) -> None:
    """A lift's cabin doors: each a known door type and width > 0; every door `level_doors`
    names is one of them."""
    spec = spec or {}
    if not isinstance(spec, dict):
        raise ConfigError(f"{at_line(file, text, 'lifts', lift, 'doors')}: expected door: {{...}}")
    for door, params in spec.items():
        at = at_line(file, text, "lifts", lift, "doors", door)
        if not isinstance(params, dict):
            raise ConfigError(f"{at}: expected {{door_type, x, y, motion_axis_orientation, width}}")
        kind = params.get("door_type", 1)
        if not (isinstance(kind, int) and not isinstance(kind, bool) and kind in LIFT_DOOR_TYPES):
            at = at_line(file, text, "lifts", lift, "doors", door, "door_type")
            raise ConfigError(
                f"{at}: {kind!r} is not a door type (RMF's: 1 single "
                "sliding, 2 double sliding, 3 single telescope, 4 double "
                "telescope, 5 single swing, 6 double swing)"
            )
        width = params.get("width", 1.0)
        if not (is_finite_number(width) and float(width) > 0):
            at = at_line(file, text, "lifts", lift, "doors", door, "width")
            raise ConfigError(f"{at}: the door's width must be > 0 m, got {width!r:.40}")
    for level, names in level_doors.items():
        for door in names:
            if door not in spec:
                at = at_line(file, text, "lifts", lift, "level_doors", level)
                known = ", ".join(map(str, spec)) or "none"
                raise ConfigError(f"{at}: lift {lift} has no door {door!r} (its doors: {known})")


def in_lifts(lifts: list[Lift], g: NavGraph) -> dict[str, str]:
    """Nodes inside the shaft of a lift that serves their level (RMF's `lift` vertex param)."""
    out: dict[str, str] = {}
    for lift in lifts:
        inside = lift.contains(g.xy)
        for k in np.flatnonzero(inside).tolist():
            if g.level_names[int(g.level[k])] in lift.levels and g.names[k] not in out:
                out[g.names[k]] = lift.name
    return out


def at_line(file: Path, text: str, *keys: str | int) -> str:
    """`file line N: levels.L1.vertices[3]` for messages."""
    line = line_of(text, keys)
    return f"{file}{f' line {line}' if line else ''}: {key_path(keys)}"


def param(params: Any, key: str, default: Any = None) -> Any:
    """The value of a [type, value] parameter."""
    if isinstance(params, dict) and isinstance(params.get(key), list) and params[key][1:]:
        return params[key][1]
    return default
