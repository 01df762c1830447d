"""Models: the robot catalogue (names to URDF files across tiers) and robot profiles."""

from fleetsim.models.catalogue import (
    KNOWN_MODELS,
    ModelEntry,
    ModelStatus,
    UnknownModelError,
    add_search_path,
    get_search_paths,
    list_all_models,
    model_sensors,
    register_model,
    remove_search_path,
    resolve_urdf,
    ros_model,
    unregister_model,
)
from fleetsim.models.profile import RobotProfile, auto_detect_profile, detect_robot_type
from fleetsim.models.sources import TIERS, ModelNotAvailableError, discover_models

__all__ = [
    "KNOWN_MODELS",
    "TIERS",
    "ModelEntry",
    "ModelNotAvailableError",
    "ModelStatus",
    "RobotProfile",
    "UnknownModelError",
    "add_search_path",
    "auto_detect_profile",
    "detect_robot_type",
    "discover_models",
    "get_search_paths",
    "list_all_models",
    "model_sensors",
    "register_model",
    "remove_search_path",
    "resolve_urdf",
    "ros_model",
    "unregister_model",
]
