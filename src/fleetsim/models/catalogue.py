"""The robot catalogue: model names to URDF files across tiers, user search paths, registration.

`resolve_urdf("panda")` looks in user search paths, then `KNOWN_MODELS`, then scans pybullet_data,
ROS packages and the robot_descriptions cache. A path (contains "/" or ends in .urdf/.sdf)
passes through.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from fleetsim.backend import PYBULLET_DATA
from fleetsim.errors import AssetNotFoundError, ConfigError
from fleetsim.models import sources
from fleetsim.models.sources import ModelNotAvailableError, discover_models


class UnknownModelError(ConfigError):
    """No model of that name anywhere; the message lists the closest known names."""


class ModelEntry(NamedTuple):
    """A catalogue entry: its tier, a function returning the URDF path, the sensors the model
    carries (each a mapping of `LidarParams` fields; every robot of the model gets them) and
    its safety fields ("auto" or a mapping of `SafetyFieldParams` fields, read from its first
    lidar; None: none).

    `path_func` raises `ModelNotAvailableError` (saying how to get the files) when they are not
    on this machine.
    """

    tier: str
    path_func: Callable[[], str]
    sensors: tuple[Mapping[str, Any], ...] = ()
    safety_fields: Any = None  # "auto", or a mapping of SafetyFieldParams' fields; None: none


# The bundled AMR with a safety-scanner-like lidar: all round, 360 beams, 20 m, 10 Hz, mounted
# at the front of the base, 18 cm up.
_AMR_LIDAR = {"beams": 360, "range_max": 20.0, "rate": 10.0, "mount": (0.2, 0.0, 0.18, 0.0)}


@dataclass(frozen=True)
class ModelStatus:
    """What `list_all_models` reports for one model."""

    name: str
    tier: str
    available: bool
    path: str | None
    reason: str | None


def ros_model(package: str, relative_path: str) -> ModelEntry:
    """A `ModelEntry` for a URDF in a ROS package: ros_model("ur_description", "urdf/ur5e.urdf")."""
    return ModelEntry("ros", partial(sources.ros, package, relative_path))


def _builtin_models() -> dict[str, ModelEntry]:
    bundled = ("mobile_robot", "arm_robot", "mobile_manipulator", "rail_arm_robot", "simple_cube")
    local = {name: ModelEntry("local", partial(sources.local, name)) for name in bundled}
    local["mobile_robot_lidar"] = ModelEntry(
        "local", partial(sources.local, "mobile_robot"), (_AMR_LIDAR,)
    )
    pybullet_data = {
        "panda": "franka_panda/panda.urdf",
        "kuka_iiwa": "kuka_iiwa/model.urdf",
        "r2d2": "r2d2.urdf",
        "husky": "husky/husky.urdf",
        "racecar": "racecar/racecar.urdf",
        "xarm6": "xarm/xarm6_robot.urdf",
    }
    ros = {
        "ur5e": ("ur_description", "urdf/ur5e.urdf"),
        "turtlebot3_burger": ("turtlebot3_description", "urdf/turtlebot3_burger.urdf"),
        "turtlebot3_waffle": ("turtlebot3_description", "urdf/turtlebot3_waffle.urdf"),
    }
    described = {"tiago": "tiago_description", "pr2": "pr2_description", "ur10": "ur10_description"}
    return {
        **local,
        **{
            n: ModelEntry("pybullet_data", partial(sources.pybullet_data, p))
            for n, p in pybullet_data.items()
        },
        **{n: ros_model(pkg, p) for n, (pkg, p) in ros.items()},
        **{
            n: ModelEntry("robot_descriptions", partial(sources.robot_descriptions, m))
            for n, m in described.items()
        },
    }


KNOWN_MODELS: dict[str, ModelEntry] = _builtin_models()
"""Curated models by name. Unlisted names are still found by scanning pybullet_data."""

_search_paths: list[Path] = []


# -- registration and search paths ------------------------------------------------------------


def register_model(
    name: str,
    path_or_entry: str | os.PathLike[str] | ModelEntry,
    force: bool = False,
    sensors: Sequence[Mapping[str, Any]] = (),
    safety_fields: Any = None,
) -> None:
    """Add a model to `KNOWN_MODELS`: a file path (tier "user") or a `ModelEntry`.

    `sensors`: what every robot of the model carries, each a mapping of `LidarParams` fields
    (`[{"beams": 64, "rate": 5}]`), as `Agent.add_lidar` takes them; `safety_fields`: its
    robots' fields, as `Agent.set_safety_fields` takes them ("auto" or a mapping; they need a
    lidar). Refuses to replace an existing name unless `force=True`.
    """
    if not name or not isinstance(name, str):
        raise ConfigError(f"model name must be a non-empty string, got {name!r}")
    if name in KNOWN_MODELS and not force:
        raise ConfigError(
            f"model '{name}' is already registered (tier {KNOWN_MODELS[name].tier}); "
            "pass force=True to replace it"
        )
    if isinstance(path_or_entry, ModelEntry):
        entry = path_or_entry
    else:
        path = Path(path_or_entry).expanduser().resolve()
        if not path.is_file():
            raise AssetNotFoundError(f"cannot register '{name}': {path_or_entry} does not exist")
        entry = ModelEntry("user", partial(str, path))
    if sensors:
        if not all(isinstance(one, Mapping) for one in sensors):
            raise ConfigError(f"model '{name}': sensors must be mappings of LidarParams fields")
        entry = entry._replace(sensors=tuple(dict(one) for one in sensors))
    if safety_fields is not None:
        if not (sensors or entry.sensors):
            raise ConfigError(f"model '{name}': safety fields need a lidar (give sensors too)")
        entry = entry._replace(safety_fields=safety_fields)
    KNOWN_MODELS[name] = entry


def model_sensors(name: str) -> tuple[tuple[Mapping[str, Any], ...], Any]:
    """The sensors a catalogue model carries and its safety fields (none for a URDF path or
    an unlisted name)."""
    entry = KNOWN_MODELS.get(name)
    return (entry.sensors, entry.safety_fields) if entry is not None else ((), None)


def unregister_model(name: str) -> None:
    """Remove a model from `KNOWN_MODELS`; an unknown name is an error."""
    if name not in KNOWN_MODELS:
        raise UnknownModelError(f"cannot unregister '{name}': not registered{_suggest(name)}")
    del KNOWN_MODELS[name]


def add_search_path(directory: str | os.PathLike[str]) -> None:
    """Look up model names in `directory` first (shadowing built-ins). Idempotent."""
    path = Path(directory).expanduser().resolve()
    if not path.is_dir():
        raise AssetNotFoundError(f"search path is not a directory: {directory}")
    if path not in _search_paths:
        _search_paths.append(path)


def remove_search_path(directory: str | os.PathLike[str]) -> None:
    """Stop looking in `directory` (no error if it was not added)."""
    path = Path(directory).expanduser().resolve()
    if path in _search_paths:
        _search_paths.remove(path)


def get_search_paths() -> list[str]:
    """User search paths, in lookup order."""
    return [str(p) for p in _search_paths]


def _in_search_paths(name: str) -> str | None:
    for d in _search_paths:
        for candidate in (
            d / f"{name}.urdf",
            d / f"{name}.sdf",
            d / name / f"{name}.urdf",
            d / name / "model.urdf",
            d / name / "urdf" / f"{name}.urdf",
        ):
            if candidate.is_file():
                return str(candidate)
    return None


def _search_path_models() -> dict[str, str]:
    found: dict[str, str] = {}
    for d in _search_paths:
        for p in sorted(d.glob("*.urdf")) + sorted(d.glob("*.sdf")):
            found.setdefault(p.stem, str(p))
        for sub in sorted(x for x in d.iterdir() if x.is_dir()):
            hit = _in_search_paths(sub.name)
            if hit:
                found.setdefault(sub.name, hit)
    return found


# -- resolution ---------------------------------------------------------------------------------


def is_path(name_or_path: str) -> bool:
    """Whether `name_or_path` is a path (has a '/' or ends in .urdf or .sdf) rather than a model
    name."""
    return (
        "/" in name_or_path
        or os.sep in name_or_path
        or name_or_path.lower().endswith((".urdf", ".sdf"))
    )


def resolve_urdf(name_or_path: str | os.PathLike[str]) -> str:
    """The absolute URDF/SDF path for a model name or a file path.

    Raises `UnknownModelError` (with the closest names) for an unknown name,
    `ModelNotAvailableError` (saying how to get it) for a known model whose files are missing, and
    `AssetNotFoundError` for a path that does not exist.
    """
    text = os.fspath(name_or_path)
    if is_path(text):
        path = Path(text).expanduser()
        if path.is_file():
            return str(path.resolve())
        if not path.is_absolute() and (PYBULLET_DATA / text).is_file():
            return str(PYBULLET_DATA / text)
        raise AssetNotFoundError(
            f"robot file not found: {text} (looked in {Path.cwd()} and pybullet_data)"
        )
    found = _in_search_paths(text)
    if found:
        return found
    entry = KNOWN_MODELS.get(text)
    missing: ModelNotAvailableError | None = None
    if entry is not None:
        try:
            return entry.path_func()
        except ModelNotAvailableError as exc:
            missing = exc
    for tier in ("pybullet_data", "ros", "robot_descriptions"):
        path_str = discover_models(tier).get(text)
        if path_str:
            return path_str
    if missing is not None and entry is not None:
        raise ModelNotAvailableError(
            f"model '{text}' (tier {entry.tier}) is not available: {missing}"
        )
    raise UnknownModelError(f"unknown robot model '{text}'{_suggest(text)}")


def _suggest(name: str) -> str:
    names = set(KNOWN_MODELS) | set(discover_models("pybullet_data")) | set(_search_path_models())
    close = difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"{hint} (`fleetsim models` lists them all, or pass a path to a .urdf file)"


def list_all_models() -> dict[str, ModelStatus]:
    """Every registered model plus those in user search paths, with availability."""
    out: dict[str, ModelStatus] = {}
    for name, path in _search_path_models().items():
        out[name] = ModelStatus(name, "search_path", True, path, None)
    for name, entry in KNOWN_MODELS.items():
        if name in out:
            continue  # shadowed by a search path
        try:
            out[name] = ModelStatus(name, entry.tier, True, entry.path_func(), None)
        except ModelNotAvailableError as exc:
            out[name] = ModelStatus(name, entry.tier, False, None, str(exc))
    return out
