"""Converting a PyBulletFleet config file (`simulation`, `managers`, `entities`) into a scenario.

Written from the format's documented keys. What maps onto fleetsim is carried over; everything
else is listed in `Conversion.notes` (and in the written file's header), never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleetsim.errors import ConfigError
from fleetsim.models import KNOWN_MODELS

# simulation keys that mean the same in fleetsim (some renamed)
SAME_KEYS = {
    "target_rtf": "target_rtf",
    "timestep": "timestep",
    "physics": "physics",
    "enable_floor": "enable_floor",
    "ignore_static_collision": "ignore_static_collision",
    "collision_margin": "collision_margin",
    "enable_collision_shapes": "enable_collision_shapes",
    "enable_structure_transparency": "enable_structure_transparency",
    "enable_shadows": "enable_shadows",
    "enable_gui_panel": "enable_gui_panels",
    "enable_collision_color_change": "enable_collision_color_change",
    "spatial_hash_cell_size_mode": "spatial_hash_cell_size_mode",
    "spatial_hash_cell_size": "spatial_hash_cell_size",
}
CAMERA_KEYS = {
    "camera_mode": "camera_mode",
    "camera_view_type": "camera_view",
    "camera_distance": "camera_distance",
    "camera_yaw": "camera_yaw",
    "camera_pitch": "camera_pitch",
    "camera_target": "camera_target",
}
FLEET_TYPES = {"batch_omni": "omnidirectional", "batch_differential": "differential"}
CONTROLLER_TYPES = {"omni": "omnidirectional", "differential": "differential"}
LIMITS = ("max_linear_vel", "max_linear_accel", "max_angular_vel", "max_angular_accel")
ENTITY_KEYS = {"name", "urdf_path", "use_fixed_base", "mass", "controller", "manager", "grid"}


@dataclass
class Conversion:
    """The scenario (as plain data, ready to dump as YAML) and what could not be carried over."""

    scenario: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_yaml(self, source: str) -> str:
        """The scenario as YAML, with a header naming `source` and listing what was not carried
        over."""
        header = [f"# Converted by `fleetsim import pybullet-fleet` from {source}."]
        if self.notes:
            header.append("# Not carried over (or changed):")
            header += [f"#   - {note}" for note in self.notes]
        body = yaml.safe_dump(self.scenario, sort_keys=False, default_flow_style=None)
        return "\n".join(header) + "\n" + body


def convert_pybullet_fleet(path: str | Path) -> Conversion:
    """Read a PyBulletFleet config file and convert it (`ConfigError` if it is not one)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not {"simulation", "entities", "managers"} & set(data):
        raise ConfigError(
            f"{path}: not a PyBulletFleet config (expected simulation, managers or entities)"
        )
    out = Conversion({"name": file.stem, "description": f"converted from {file.name}"})
    for key in sorted(set(data) - {"simulation", "managers", "entities"}):
        out.notes.append(f"top-level '{key}' (no fleetsim equivalent)")
    out.scenario["simulation"] = _simulation(data.get("simulation") or {}, out.notes)
    fleets = _managers(data.get("managers") or [], out.notes)
    robots = [
        _entity(entity, i, fleets, out.notes) for i, entity in enumerate(data.get("entities") or [])
    ]
    if robots:
        out.scenario["robots"] = robots
    else:
        # fleetsim needs something to simulate: the PyBulletFleet base configs only set options.
        out.scenario["robots"] = [{"name": "robot", "model": "mobile_robot"}]
        out.notes.append("no entities: added one mobile_robot so the scenario runs")
    return out


def _simulation(section: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key in SAME_KEYS:
            out[SAME_KEYS[key]] = value
        elif key == "gui":
            if value:
                notes.append("simulation.gui: true (fleetsim runs headless; add --gui to watch)")
        elif key == "monitor":
            if value:
                notes.append("simulation.monitor: true (left out; set it again to see the monitor)")
        elif key == "duration":
            if value:
                out["duration"] = value
            else:
                notes.append("simulation.duration 0 (run until stopped): left out, the default")
        elif key == "collision_detection_method":
            out["collision_narrowphase"] = _narrowphase(value, section, notes)
        elif key == "camera" and isinstance(value, dict):
            for camera_key, camera_value in value.items():
                if camera_key in CAMERA_KEYS and camera_value != "none":
                    out[CAMERA_KEYS[camera_key]] = camera_value
                else:
                    notes.append(f"simulation.camera.{camera_key}: {camera_value!r}")
        else:
            notes.append(f"simulation.{key}: {value!r}")
    return out


def _narrowphase(method: Any, section: dict[str, Any], notes: list[str]) -> str:
    if method in ("closest_points", "contact_points"):
        if method == "contact_points" and not section.get("physics"):
            notes.append(
                "collision_detection_method contact_points without physics: closest_points"
            )
            return "closest_points"
        return str(method)
    chosen = "contact_points" if section.get("physics") else "closest_points"
    notes.append(f"collision_detection_method {method!r}: {chosen}")
    return chosen


def _managers(managers: list[Any], notes: list[str]) -> dict[str, dict[str, Any]]:
    """Per manager name: the motion mode and limits its robots get."""
    fleets: dict[str, dict[str, Any]] = {}
    for i, manager in enumerate(managers):
        if not isinstance(manager, dict) or "name" not in manager:
            notes.append(f"managers[{i}]: not a named manager")
            continue
        controller = manager.get("fleet_controller") or {}
        settings: dict[str, Any] = {}
        kind = controller.get("type")
        if kind in FLEET_TYPES:
            settings["motion_mode"] = FLEET_TYPES[kind]
        elif kind is not None:
            notes.append(f"managers[{i}].fleet_controller.type {kind!r}")
        for limit in LIMITS:
            value = controller.get(limit)
            if value is None:
                continue
            if value > 0:
                settings[limit] = value
            else:
                notes.append(f"managers[{i}] {limit} {value} (must be > 0; the default is kept)")
        for key in sorted(set(controller) - {"type", *LIMITS}):
            notes.append(f"managers[{i}].fleet_controller.{key}")
        for key in sorted(set(manager) - {"name", "fleet_controller"}):
            notes.append(f"managers[{i}].{key}")
        fleets[manager["name"]] = settings
    return fleets


def _entity(
    entity: Any, i: int, fleets: dict[str, dict[str, Any]], notes: list[str]
) -> dict[str, Any]:
    where = f"entities[{i}]"
    if not isinstance(entity, dict) or "urdf_path" not in entity:
        raise ConfigError(f"{where}: an entity needs urdf_path")
    robot: dict[str, Any] = {}
    if entity.get("name"):
        robot["name"] = entity["name"]
    robot["model"] = _model(str(entity["urdf_path"]))
    fleet = fleets.get(str(entity.get("manager", "")), {})
    if entity.get("manager") and entity["manager"] not in fleets:
        notes.append(f"{where}.manager {entity['manager']!r}: no such manager")
    controller = (entity.get("controller") or {}).get("type")
    mode = fleet.get("motion_mode") or CONTROLLER_TYPES.get(str(controller))
    if controller and controller not in CONTROLLER_TYPES:
        notes.append(f"{where}.controller.type {controller!r}")
    fixed = bool(entity.get("use_fixed_base", False))
    if mode and not fixed:
        robot["motion_mode"] = mode
    if not fixed:
        robot.update({k: v for k, v in fleet.items() if k in LIMITS})
    robot["use_fixed_base"] = fixed
    if entity.get("mass") is not None:
        robot["mass"] = entity["mass"]
    if "grid" in entity:
        robot["grid"] = _grid(entity["grid"], where, fixed, notes)
    for key in sorted(set(entity) - ENTITY_KEYS):
        notes.append(f"{where}.{key}")
    return robot


def _model(urdf_path: str) -> str:
    """A bundled model's name for "robots/<name>.urdf" (fleetsim ships the same robots)."""
    stem = Path(urdf_path).stem
    if urdf_path.startswith("robots/") and stem in KNOWN_MODELS:
        return stem
    return urdf_path


def _grid(grid: dict[str, Any], where: str, fixed: bool, notes: list[str]) -> dict[str, Any]:
    spacing = grid.get("spacing", 1.0)
    dx, dy = (spacing, spacing) if isinstance(spacing, int | float) else spacing[:2]
    offset = list(grid.get("offset", (0.0, 0.0, 0.0)))
    if not fixed and offset[2:] and offset[2] != 0:
        notes.append(
            f"{where}.grid.offset z {offset[2]}: 0 (fleetsim stands robots on the floor by their "
            "URDF link frame)"
        )
        offset[2] = 0.0
    if "count" in grid:
        out = {"count": grid["count"], "spacing": [dx, dy], "origin": offset}
        if grid.get("columns"):
            out["columns"] = grid["columns"]
        return out
    # Cells by index: x_min..x_max by y_min..y_max, `spacing` apart, from `offset`.
    x0, x1 = int(grid.get("x_min", 0)), int(grid.get("x_max", 0))
    y0, y1 = int(grid.get("y_min", 0)), int(grid.get("y_max", 0))
    columns = x1 - x0 + 1
    origin = [offset[0] + x0 * dx, offset[1] + y0 * dy, offset[2]]
    return {
        "count": columns * (y1 - y0 + 1),
        "spacing": [dx, dy],
        "origin": origin,
        "columns": columns,
    }
