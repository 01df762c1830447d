"""`JointControl`: joint targets for arms and manipulators (mixed into `Agent`).

Controllable joints are the robot's movable joints except continuous ones (wheels), in joint
order. The control mode is chosen once per agent: motors with force limits when physics is on and
the robot has mass, otherwise kinematic interpolation at the URDF velocity limits (2.0 rad/s or
0.5 m/s where the URDF gives none), with positions cached in the joint table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.agents.params import AgentSpawnParams
from fleetsim.errors import ConfigError, closest
from fleetsim.models import RobotProfile
from fleetsim.objects import World

DEFAULT_JOINT_TOLERANCE = 0.01
FALLBACK_REVOLUTE_VEL = 2.0  # rad/s
FALLBACK_PRISMATIC_VEL = 0.5  # m/s

Tolerance = float | Sequence[float] | Mapping[str, float] | None
Targets = Sequence[float] | Mapping[str, float] | np.ndarray


class JointControl:
    """Joint commands; expects `_world`, `handle`, `object_id`, `name`, `profile` from Agent."""

    _world: World
    name: str
    _params: AgentSpawnParams
    _joint_handles: np.ndarray | None = None
    _joint_tolerance: Tolerance = None
    _last_joint_targets: dict[int, float] | None = None

    if TYPE_CHECKING:  # provided by SimObject and Agent

        @property
        def handle(self) -> int:
            """The row handle in the body table."""

        @property
        def object_id(self) -> int:
            """The PyBullet body id."""

        @property
        def profile(self) -> RobotProfile:
            """The robot's profile (joints, limits, end effector)."""

    # -- which joints ---------------------------------------------------------------------

    @property
    def controllable_joints(self) -> list[tuple[int, str]]:
        """(PyBullet index, name) of the joints targets refer to, in order."""
        p = self.profile
        wheels = set(p.wheel_joint_names)
        return [
            (i, n)
            for i, n in zip(p.movable_joint_indices, p.movable_joint_names, strict=True)
            if n not in wheels
        ]

    @property
    def uses_physics_joints(self) -> bool:
        """Motors (physics on and the robot has mass) rather than kinematic interpolation."""
        return bool(self._world.physics and self._params.mass != 0)

    def _rows(self) -> np.ndarray:
        """Joint-table rows of this robot (registered on first use)."""
        table = self._world.joints
        if self._joint_handles is None or not all(
            table.is_alive(int(h)) for h in self._joint_handles[:1]
        ):
            self._joint_handles = self._register_joints()
        return table.rows(self._joint_handles)

    def _register_joints(self) -> np.ndarray:
        joints = self.controllable_joints
        if not joints:
            raise ConfigError(
                f"{self.name} has no controllable joints (a {self.profile.robot_type} robot)"
            )
        p = self.profile
        position_of = {i: k for k, i in enumerate(p.movable_joint_indices)}
        indices = [i for i, _ in joints]
        current = self._world.backend.joints.read_positions(self.object_id, indices)
        lower = np.array([p.joint_lower_limits[position_of[i]] for i in indices])
        upper = np.array([p.joint_upper_limits[position_of[i]] for i in indices])
        urdf_vel = np.array([p.joint_max_velocities[position_of[i]] for i in indices])
        prismatic = np.array([self._is_prismatic(i) for i in indices])
        fallback = np.where(prismatic, FALLBACK_PRISMATIC_VEL, FALLBACK_REVOLUTE_VEL)
        return self._world.joints.add(
            len(indices),
            body=self.handle,
            body_id=self.object_id,
            joint=indices,
            position=current,
            target=current,
            max_vel=np.where(urdf_vel > 0, urdf_vel, fallback),
            lower=lower,
            upper=upper,
            physics=self.uses_physics_joints,
        )

    def _is_prismatic(self, joint_index: int) -> bool:
        p = self.profile
        return p.joint_types[p.movable_joint_indices.index(joint_index)] == "prismatic"

    def _slot(self, joint: int | str) -> int:
        """Position in `controllable_joints` of a joint given by PyBullet index or by name."""
        joints = self.controllable_joints
        if not joints:
            raise ConfigError(
                f"{self.name} has no controllable joints (a {self.profile.robot_type} robot)"
            )
        for k, (index, name) in enumerate(joints):
            if joint in (index, name):
                return k
        names = [n for _, n in joints]
        guess = closest(str(joint), names)
        hint = f"; did you mean '{guess}'?" if guess else f"; joints: {', '.join(names)}"
        raise ConfigError(f"{self.name} has no controllable joint {joint!r}{hint}")

    # -- targets --------------------------------------------------------------------------

    def set_joint_target(
        self, joint: int | str, position: float, max_force: float | None = None
    ) -> None:
        """Move one joint (index or name) to `position` (rad or m)."""
        self._set_targets({self._slot(joint): position}, max_force)

    def set_all_joints_targets(self, positions: Targets, max_force: float | None = None) -> None:
        """Targets for all controllable joints (a list in order) or some (a dict by name)."""
        self._set_targets(self._as_slots(positions), max_force)

    def _as_slots(self, positions: Targets) -> dict[int, float]:
        if isinstance(positions, Mapping):
            return {self._slot(name): v for name, v in positions.items()}
        if isinstance(positions, str | bytes):
            raise ConfigError(f"{self.name}: joint targets must be numbers, got {positions!r:.80}")
        try:
            values = list(np.asarray(positions, dtype=np.float64).reshape(-1))
        except (TypeError, ValueError):
            raise ConfigError(
                f"{self.name}: joint targets must be a list of numbers or a dict by joint name, "
                f"got {positions!r:.80}"
            ) from None
        count = len(self.controllable_joints)
        if len(values) != count:
            names = ", ".join(n for _, n in self.controllable_joints)
            raise ConfigError(
                f"{self.name} takes {count} joint targets ({names}), got {len(values)}"
            )
        return dict(enumerate(values))

    def _set_targets(self, targets: dict[int, Any], max_force: float | None) -> None:
        rows = self._rows()
        table = self._world.joints
        names = [n for _, n in self.controllable_joints]
        for slot, value in targets.items():
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise ConfigError(
                    f"{self.name}: the target for {names[slot]} must be a number (rad or m), "
                    f"got {value!r:.80}"
                )
            lo, hi = table["lower"][rows[slot]], table["upper"][rows[slot]]
            if not math.isfinite(value) or not lo - 1e-9 <= value <= hi + 1e-9:
                raise ConfigError(
                    f"{self.name}: target {value!r} for {names[slot]} is outside its limits "
                    f"[{lo:.4g}, {hi:.4g}]"
                )
        chosen = rows[list(targets)]
        table["target"][chosen] = np.clip(
            list(targets.values()), table["lower"][chosen], table["upper"][chosen]
        )
        table["moving"][chosen] = table["target"][chosen] != table["position"][chosen]
        if max_force is not None:
            table["max_force"][chosen] = max_force
        self._last_joint_targets = {
            **(self._last_joint_targets or {}),
            **dict(zip(targets, table["target"][chosen].tolist(), strict=True)),
        }
        if self.uses_physics_joints:
            self._world.backend.joints.drive(
                self.object_id,
                table["joint"][rows].tolist(),
                table["target"][rows].tolist(),
                table["max_force"][rows].tolist(),
            )
            table["moving"][rows] = True

    # -- state ----------------------------------------------------------------------------

    def get_joint_state(self, joint: int | str) -> float:
        """Current position of one joint (rad or m), from the cache: no PyBullet call."""
        row = self._rows()[self._slot(joint)]  # rows first: registering may grow the table
        return float(self._world.joints["position"][row])

    def joint_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) limits of the controllable joints, rad or m, shape (n,) each."""
        rows = self._rows()
        return self._world.joints["lower"][rows].copy(), self._world.joints["upper"][rows].copy()

    def joint_velocity_limits(self) -> np.ndarray:
        """Velocity limits of the controllable joints (URDF's, or the fallbacks), shape (n,)."""
        rows = self._rows()
        limits: np.ndarray = self._world.joints["max_vel"][rows].copy()
        return limits

    def get_joint_positions(self) -> dict[str, float]:
        """Current positions of all controllable joints, by name."""
        rows = self._rows()  # first: registering joints may grow (reallocate) the table
        values = self._world.joints["position"][rows].tolist()
        return dict(zip((n for _, n in self.controllable_joints), values, strict=True))

    @property
    def joint_tolerance(self) -> Tolerance:
        """Default tolerance for JointAction: a float, a list by joint index, a dict by name."""
        return self._joint_tolerance

    @joint_tolerance.setter
    def joint_tolerance(self, value: Tolerance) -> None:
        self._joint_tolerance = value

    def set_wake_tolerance(self, tolerance: Tolerance = None) -> None:
        """How close to their targets this robot's kinematic joints must come for a waiting
        action to be woken (per joint, as `tolerances`)."""
        self._world.joints["wake_tol"][self._rows()] = self.tolerances(tolerance)

    def tolerances(self, tolerance: Tolerance = None) -> np.ndarray:
        """Per-joint tolerances: `tolerance`, else the agent's `joint_tolerance`, else 0.01."""
        chosen = tolerance if tolerance is not None else self._joint_tolerance
        joints = self.controllable_joints
        if chosen is None:
            return np.full(len(joints), DEFAULT_JOINT_TOLERANCE)
        if isinstance(chosen, int | float):
            return np.full(len(joints), float(chosen))
        if isinstance(chosen, Mapping):
            return np.array(
                [float(chosen.get(name, DEFAULT_JOINT_TOLERANCE)) for _, name in joints]
            )
        by_index = list(chosen)  # a list is indexed by absolute PyBullet joint index
        return np.array(
            [
                float(by_index[i]) if i < len(by_index) else DEFAULT_JOINT_TOLERANCE
                for i, _ in joints
            ]
        )

    def are_joints_at_targets(
        self, targets: Targets | None = None, tolerance: Tolerance = None
    ) -> bool:
        """Whether the given targets (or the last ones set) are reached within tolerance."""
        wanted = self._last_joint_targets if targets is None else self._as_slots(targets)
        if not wanted:
            return True
        rows = self._rows()
        tol = self.tolerances(tolerance)
        slots = list(wanted)
        position = self._world.joints["position"][rows[slots]]
        return bool(
            np.all(np.abs(position - np.array(list(wanted.values()))) <= tol[slots] + 1e-12)
        )

    def are_all_joints_at_targets(self, targets: Targets, tolerance: Tolerance = None) -> bool:
        """Whether every controllable joint is within tolerance of `targets`."""
        return self.are_joints_at_targets(targets, tolerance)
