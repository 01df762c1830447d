"""fleetsim: a kinematics-first simulator for robot fleets, built on PyBullet.

The public API follows the PyBulletFleet design names: `MultiRobotSimulationCore`,
`SimulationParams`, `SimObject`, `SimObjectSpawnParams`, `ShapeParams`, `Pose`, `Path`.
"""

from pathlib import Path as _FsPath
from typing import Any as _Any

from fleetsim.actions import (
    Action,
    ActionStatus,
    Drop,
    DropAction,
    JointAction,
    MoveAction,
    MoveTo,
    Pick,
    PickAction,
    PoseAction,
    Wait,
    WaitAction,
)
from fleetsim.agents import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    GridSpawnParams,
    IKParams,
    SimObjectManager,
)
from fleetsim.core import EVENTS, PROFILE_KEYS, MultiRobotSimulationCore, SimulationParams
from fleetsim.core import frontends as _frontends
from fleetsim.errors import (
    AssetError,
    AssetNotFoundError,
    BackendError,
    ConfigError,
    FleetSimError,
    ObjectRemovedError,
    SimulationClosedError,
)
from fleetsim.geometry import Path, Pose, ShapeParams, quat
from fleetsim.logs import LogLevelManager
from fleetsim.models import (
    KNOWN_MODELS,
    RobotProfile,
    add_search_path,
    auto_detect_profile,
    list_all_models,
    register_model,
    resolve_urdf,
)
from fleetsim.objects import SimObject, SimObjectSpawnParams
from fleetsim.sensors import FieldSet, LaserScan, Lidar, LidarParams, SafetyFieldParams
from fleetsim.state import CollisionMode
from fleetsim.version import __version__
from fleetsim.viz import DataMonitor, GuiControls


def _record(
    sim: MultiRobotSimulationCore,
    path: _FsPath | str | None,
    rate: float,
    metadata: dict[str, str] | None,
    out: _Any,
) -> _frontends.Recorder:
    """`sim.record(...)`: `fleetsim.recording.record`, imported when first used (60 ms, and the
    `[record]` extra)."""
    from fleetsim.recording import record

    return record(sim, path, rate, metadata, out)


# The core calls its GUI controls, data monitor and recorder through protocols; they live above.
_frontends.provide(viewer=GuiControls, monitor=DataMonitor, recorder=_record)


__all__ = [
    "EVENTS",
    "KNOWN_MODELS",
    "PROFILE_KEYS",
    "Action",
    "ActionStatus",
    "Agent",
    "AgentManager",
    "AgentSpawnParams",
    "AssetError",
    "AssetNotFoundError",
    "BackendError",
    "CollisionMode",
    "ConfigError",
    "Drop",
    "DropAction",
    "FieldSet",
    "FleetSimError",
    "GridSpawnParams",
    "IKParams",
    "JointAction",
    "LaserScan",
    "Lidar",
    "LidarParams",
    "LogLevelManager",
    "MoveAction",
    "MoveTo",
    "MultiRobotSimulationCore",
    "ObjectRemovedError",
    "Path",
    "Pick",
    "PickAction",
    "Pose",
    "PoseAction",
    "RobotProfile",
    "SafetyFieldParams",
    "ShapeParams",
    "SimObject",
    "SimObjectManager",
    "SimObjectSpawnParams",
    "SimulationClosedError",
    "SimulationParams",
    "Wait",
    "WaitAction",
    "__version__",
    "add_search_path",
    "auto_detect_profile",
    "list_all_models",
    "quat",
    "register_model",
    "resolve_urdf",
]
