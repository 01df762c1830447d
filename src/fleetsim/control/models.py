"""Motion models by name: the built-in "omnidirectional" and "differential", and your own.

A motion model moves every agent of its kind one step, as arrays (one call per step for all of
them, never one call per robot):

    def step(motion, goal, goal_yaw, align, limits, dt) -> (motion, dist_left, yaw_left)

`motion` holds pos (N, 3) m, yaw (N,) rad, vel (N, 3) m/s (world frame) and yaw_rate (N,) rad/s;
`goal` (N, 3), `goal_yaw` (N,), `align` (N,) bool (end at `goal_yaw`); `limits` is
(max_v, max_a, max_w, max_alpha), each (N,). Return the new `Motion`, the distance (N,) still to
go and the yaw error (N,) still to turn. An agent has arrived when both are within its tolerance
and it comes to rest exactly on the goal (distance 0, velocities 0): land on the goal.

Register a model with `register_motion_model("name", model)` and spawn agents with
`motion_mode="name"`; a scenario file may also name it as "module:attribute" (imported once).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fleetsim.control.differential import step_differential
from fleetsim.control.omni import Motion, step_omni
from fleetsim.errors import ConfigError, FleetSimError, closest

FloatArray = np.ndarray
Limits = tuple[FloatArray, FloatArray, FloatArray, FloatArray]
MAX_MODELS = 127  # ids live in an int8 column


# step(motion, goal, goal_yaw, align, limits, dt) -> (motion, dist_left, yaw_left)
MotionModel = Callable[
    [Motion, FloatArray, FloatArray, FloatArray, Limits, float],
    tuple[Motion, FloatArray, FloatArray],
]


_NAMES: dict[str, int] = {}
_MODELS: list[MotionModel] = []
BUILT_IN = ("omnidirectional", "differential")


def checked(name: str, model: MotionModel) -> MotionModel:
    """`model` with what it returns checked every step (a few array tests): the shapes the
    agents' count gives, and finite numbers. A model that returns arrays of the wrong length or
    NaN stops the run with an error naming it, instead of agents "arriving" without moving or
    touching every body."""

    def step(
        m: Motion,
        goal: FloatArray,
        goal_yaw: FloatArray,
        align: FloatArray,
        limits: Limits,
        dt: float,
    ) -> tuple[Motion, FloatArray, FloatArray]:
        out = model(m, goal, goal_yaw, align, limits, dt)
        n = len(goal)
        try:
            after, dist_left, yaw_left = out
            parts = {
                "pos": after.pos,
                "yaw": after.yaw,
                "vel": after.vel,
                "yaw_rate": after.yaw_rate,
                "dist_left": dist_left,
                "yaw_left": yaw_left,
            }
        except (TypeError, ValueError, AttributeError):
            raise FleetSimError(
                f"motion model '{name}' must return (Motion, dist_left, "
                f"yaw_left), got {type(out).__name__}"
            ) from None
        for key, value in parts.items():
            shape = (n, 3) if key in ("pos", "vel") else (n,)
            array = np.asarray(value)
            if array.shape != shape:
                raise FleetSimError(
                    f"motion model '{name}' returned {key} of shape "
                    f"{array.shape} for {n} agents (expected {shape})"
                )
            if array.dtype.kind not in "fiu" or not np.isfinite(array).all():
                raise FleetSimError(
                    f"motion model '{name}' returned {key} that is not all "
                    "finite numbers (NaN or infinity)"
                )
        return after, dist_left, yaw_left

    return step


def register_motion_model(name: str, model: MotionModel, force: bool = False) -> int:
    """Make `model` available as `motion_mode=name`; returns its id. `force` replaces a model
    registered under that name (never a built-in)."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"a motion model needs a non-empty name, got {name!r}")
    if not callable(model):
        raise ConfigError(f"motion model '{name}' must be callable, got {model!r:.80}")
    if name in _NAMES:
        if not force or _NAMES[name] < 2:
            raise ConfigError(
                f"motion model '{name}' is already registered"
                + ("" if _NAMES[name] < 2 else "; pass force=True to replace it")
            )
        _MODELS[_NAMES[name]] = checked(name, model)
        return _NAMES[name]
    if len(_MODELS) >= MAX_MODELS:
        raise ConfigError(f"at most {MAX_MODELS} motion models can be registered")
    _NAMES[name] = len(_MODELS)
    _MODELS.append(model if name in BUILT_IN else checked(name, model))
    return _NAMES[name]


def motion_model_id(name: str) -> int:
    """The id of a registered model; an unknown name lists the closest one."""
    if name in _NAMES:
        return _NAMES[name]
    guess = closest(str(name), _NAMES)
    hint = f"did you mean '{guess}'?" if guess else f"known: {', '.join(_NAMES)}"
    raise ConfigError(
        f"unknown motion_mode {name!r}: {hint} (register your own with register_motion_model)"
    )


def motion_model(model_id: int) -> MotionModel:
    """The motion model registered under `model_id`."""
    return _MODELS[model_id]


def motion_model_names() -> list[str]:
    """The names of the registered motion models."""
    return list(_NAMES)


register_motion_model("omnidirectional", step_omni)
register_motion_model("differential", step_differential)
