"""Inverse kinematics for agents (mixed into `Agent`): `IKParams`, `move_end_effector`.

PyBullet's solver is run from the robot's current joints and refined: after each solve the joints
are set, the end effector found by forward kinematics, and the solve repeated from there, up to
`max_outer_iterations`. If that does not converge, it restarts from joint configurations at
`seed_quartiles` of each joint's range. Fixed joints are skipped; continuous joints (wheels) and
joints outside `ik_joint_names` are locked. The robot's real joints are untouched until the caller
sets the result as targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.agents.ik_params import IKParams
from fleetsim.agents.joints import Targets
from fleetsim.backend.introspect import joint_infos
from fleetsim.errors import ConfigError, closest
from fleetsim.geometry import Pose
from fleetsim.models import RobotProfile
from fleetsim.objects import World


@dataclass(frozen=True)
class IKResult:
    """Joint positions found, the end-effector error (m), and whether the target is reachable."""

    positions: np.ndarray
    error: float
    reachable: bool


class InverseKinematics:
    """End-effector commands; expects the Agent / JointControl attributes."""

    _world: World
    name: str
    ik_params: IKParams
    _ee_target: tuple[np.ndarray, int] | None = None
    _link_names: dict[str, int] | None = None

    if TYPE_CHECKING:

        @property
        def object_id(self) -> int:
            """The PyBullet body id."""

        @property
        def profile(self) -> RobotProfile:
            """The robot's profile (joints, limits, end effector)."""

        @property
        def handle(self) -> int:
            """The row handle in the body table."""

        @property
        def controllable_joints(self) -> list[tuple[int, str]]:
            """(PyBullet index, name) of each controllable joint."""

        def _rows(self) -> np.ndarray: ...

        def set_all_joints_targets(
            self, positions: Targets, max_force: float | None = None
        ) -> None:
            """Set every controllable joint's target."""

    def end_effector_link(self, link: int | str | None = None) -> int:
        """A link index: `link` (index or name), else the profile's end effector."""
        if link is None:
            if self.profile.ee_link_index is None:
                raise ConfigError(f"{self.name} has no end effector; pass end_effector_link")
            return self.profile.ee_link_index
        if isinstance(link, int):
            return link
        if self._link_names is None:
            infos = joint_infos(self._world.backend.client, self.object_id)
            self._link_names = {j.link_name: j.index for j in infos}
        if link not in self._link_names:
            guess = closest(link, self._link_names)
            raise ConfigError(
                f"{self.name} has no link '{link}'"
                + (f"; did you mean '{guess}'?" if guess else "")
            )
        return self._link_names[link]

    def get_end_effector_pose(self, link: int | str | None = None) -> Pose:
        """World pose of the end effector (or `link`) at the current joint positions."""
        world = self._world
        world.sync_rows(world.bodies.rows([self.handle]))
        pos, orn = world.backend.joints.link_pose(self.object_id, self.end_effector_link(link))
        return Pose(pos, orn)

    def solve_ik(
        self,
        position: ArrayLike,
        orientation: ArrayLike | None = None,
        link: int | str | None = None,
    ) -> IKResult:
        """Joint positions that put the end effector (or `link`) at `position` (metres)."""
        target = np.asarray(position, dtype=np.float64).reshape(-1)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise ConfigError(f"IK target must be 3 finite numbers (x, y, z), got {position!r}")
        ee = self.end_effector_link(link)
        world, joints, params = self._world, self._world.backend.joints, self.ik_params
        world.sync_rows(world.bodies.rows([self.handle]))
        movable = list(self.profile.movable_joint_indices)
        current = joints.read_positions(self.object_id, movable)
        lower, upper = self._ik_limits(movable, current)
        orn = None if orientation is None else list(np.asarray(orientation, dtype=np.float64))
        best, best_err = current, math.inf
        seeds = [current] + [
            np.where(np.isfinite(lower), lower + q * (upper - lower), current)
            for q in params.seed_quartiles
        ]
        try:
            for seed in seeds:
                state = seed
                for _ in range(params.max_outer_iterations):
                    joints.write_positions(self.object_id, movable, state.tolist())
                    solution = joints.inverse_kinematics(
                        self.object_id,
                        ee,
                        target,
                        orn,
                        (lower, upper),
                        state,
                        params.max_inner_iterations,
                        params.residual_threshold,
                    )
                    state = np.clip(solution[: len(movable)], lower, upper)
                    joints.write_positions(self.object_id, movable, state.tolist())
                    error = float(
                        np.linalg.norm(np.array(joints.link_pose(self.object_id, ee)[0]) - target)
                    )
                    if error < best_err:
                        best, best_err = state, error
                    if error <= params.convergence_threshold:
                        break
                if best_err <= params.convergence_threshold:
                    break
        finally:
            joints.write_positions(self.object_id, movable, current.tolist())  # the real state
        slots = [movable.index(i) for i, _ in self.controllable_joints]
        return IKResult(best[slots], best_err, best_err <= params.reachability_tolerance)

    def _ik_limits(
        self, movable: Sequence[int], current: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Limits per movable joint: real limits for joints IK may move, current value otherwise."""
        p = self.profile
        chosen = self.ik_params.ik_joint_names
        names = dict(zip(p.movable_joint_indices, p.movable_joint_names, strict=True))
        wheels = set(p.wheel_joint_names)
        if chosen is not None:
            unknown = set(chosen) - set(names.values())
            if unknown:
                raise ConfigError(
                    f"IKParams.ik_joint_names: {self.name} has no joints {sorted(unknown)}"
                )
        lower = np.array(p.joint_lower_limits, dtype=np.float64)
        upper = np.array(p.joint_upper_limits, dtype=np.float64)
        free = np.array(
            [
                (names[i] in chosen) if chosen is not None else names[i] not in wheels
                for i in movable
            ]
        )
        lower = np.where(free, np.where(np.isfinite(lower), lower, -2 * math.pi), current)
        upper = np.where(free, np.where(np.isfinite(upper), upper, 2 * math.pi), current)
        return lower, upper

    def move_end_effector(
        self,
        target_position: ArrayLike,
        target_orientation: ArrayLike | None = None,
        end_effector_link: int | str | None = None,
        max_force: float | None = None,
    ) -> bool:
        """Set joint targets that bring the end effector to `target_position`; True if reachable.

        Unreachable targets still get the best joints found, so the arm gets as close as it can.
        `max_force` limits the motors of arms under physics.
        """
        result = self.solve_ik(target_position, target_orientation, end_effector_link)
        self.set_all_joints_targets(result.positions, max_force)
        self._ee_target = (
            np.asarray(target_position, dtype=np.float64),
            self.end_effector_link(end_effector_link),
        )
        return result.reachable

    def are_ee_at_target(self, tolerance: float = 0.02) -> bool:
        """Whether the end effector is within `tolerance` metres of the last `move_end_effector`."""
        if self._ee_target is None:
            return False
        target, link = self._ee_target
        return bool(
            np.linalg.norm(np.array(self.get_end_effector_pose(link).position) - target)
            <= tolerance
        )
