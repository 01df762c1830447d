"""`Pick` and `Drop` (aliases `PickAction`, `DropAction`): carry objects with mobile robots.

Both drive approach pose -> stand pose -> act -> back to the approach pose, unless
`use_approach=False` (act where the robot is). Problems (nothing to pick, an object another robot
holds, nothing to drop) end the action FAILED with a message, leaving the world as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.actions.arm import ArmMove
from fleetsim.actions.legs import LegsAction, approach_legs, check_offset
from fleetsim.actions.reach import BASE_LINK, DEFAULT_REACH_M, check_reach, out_of_reach
from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose
from fleetsim.objects import SimObject

if TYPE_CHECKING:
    from fleetsim.agents import Agent


class Pick(LegsAction):
    """Pick up an object (by PyBullet id, or the nearest pickable one near a position) and carry it.

    Args:
        target_object_id: the object's PyBullet body id (`obj.object_id`).
        target_position: pick the nearest pickable object within `search_radius` of it.
        search_radius: metres, for `target_position`.
        attach_link: link to attach to; the base (-1) for mobile robots.
        attach_relative_pose: the object's pose in the robot's frame once held; by default it
            keeps its pose relative to the robot at the moment of pick-up.
        use_approach: drive approach -> object -> back out; False picks where the robot is.
        approach_offset: metres before the object where the approach starts.
        reach: metres the object may be from the robot's body (base attachment) or from the
            gripper link when it is taken; farther, the Pick fails and nothing moves.
        stand_offset: the robot stops this many metres short of the object (a mobile
            manipulator whose arm reaches forward).
    """

    def __init__(
        self,
        target_object_id: int | None = None,
        target_position: ArrayLike | None = None,
        search_radius: float = 0.5,
        attach_link: int | str | None = None,
        attach_relative_pose: Pose | None = None,
        use_approach: bool = True,
        approach_offset: float = 1.0,
        joint_targets: Any = None,
        ee_target_position: ArrayLike | None = None,
        continue_on_ik_failure: bool = True,
        reach: float = DEFAULT_REACH_M,
        stand_offset: float = 0.0,
    ) -> None:
        super().__init__()
        self.reach = check_reach(reach)
        self.stand_offset = check_offset("stand_offset", stand_offset)
        if target_object_id is None and target_position is None and ee_target_position is None:
            raise ConfigError("Pick needs target_object_id, target_position or ee_target_position")
        self.target_object_id = target_object_id
        self.target_position = (
            None if target_position is None else _finite_xyz(target_position, "target_position")
        )
        if not (np.isfinite(search_radius) and search_radius > 0):
            raise ConfigError(
                f"search_radius must be a finite distance > 0 m, got {search_radius!r}"
            )
        if attach_relative_pose is not None and not isinstance(attach_relative_pose, Pose):
            raise ConfigError(f"attach_relative_pose must be a Pose, got {attach_relative_pose!r}")
        self.search_radius = float(search_radius)
        self.attach_link = attach_link
        self.attach_relative_pose = attach_relative_pose
        self.use_approach = use_approach
        self.approach_offset = check_offset("approach_offset", approach_offset)
        self.arm = _arm_move(joint_targets, ee_target_position)
        self.continue_on_ik_failure = continue_on_ik_failure
        if self.target_position is None and self.arm is not None:
            self.target_position = self.arm.ee_position  # pick what is at the gripper's target
        self.target: SimObject | None = None
        self._agent: Agent | None = None

    def fail(self, message: str) -> None:
        """End FAILED with `message`, and stop excusing the contact with the object."""
        super().fail(message)
        self._unexcuse()

    def stop(self, agent: Agent) -> None:
        """Stop the agent, and stop excusing the contact with the object."""
        super().stop(agent)
        self._unexcuse()

    def _unexcuse(self) -> None:
        """A pick that did not happen: touching the object is a collision again."""
        agent, target = self._agent, self.target
        if agent is None or target is None or target.is_removed:
            return
        if target.attached_to is not agent:
            agent.world.intended.forget(agent.handle, target.handle)

    def start(self, agent: Agent) -> None:
        """Find the object (by id, or the nearest pickable one within `search_radius`) and set off
        for it; FAILED when there is none or another robot holds it."""
        obj = self._find(agent)
        if obj is None:
            return
        self.target = obj
        self._agent = agent
        agent.world.intended.allow(agent.handle, obj.handle)  # the gripper may touch it
        legs = (
            approach_legs(
                agent,
                np.array(obj.get_pose().position[:2]),
                self.approach_offset,
                self.stand_offset,
            )
            if self.use_approach
            else []
        )
        self.begin_legs(agent, legs, act_at=1 if len(legs) == 3 else 0)

    def act(self, agent: Agent) -> None:
        """Attach the object, if it is within reach of the body or the gripper."""
        obj = self.target
        if obj is None or obj.is_removed:
            self.fail("the object to pick was removed")
            return
        if self._held_elsewhere(agent, obj):
            return
        link = self._link(agent)
        too_far = out_of_reach(agent, link, obj, self.reach)
        if too_far is not None:
            self.fail(too_far)
            return
        agent.attach_object(obj, self.attach_relative_pose, link=link)

    def _held_elsewhere(self, agent: Agent, obj: SimObject) -> bool:
        holder = obj.attached_to
        if holder is agent:
            self.fail(f"{agent.name} already holds {obj.name}")
        elif holder is not None:
            self.fail(f"{obj.name} is held by {holder.name}")
        return holder is not None

    def _link(self, agent: Agent) -> int:
        """`attach_link`, or by default the end effector of robots that have one, else the base."""
        if self.attach_link is None:
            ee = agent.profile.ee_link_index
            return BASE_LINK if ee is None else ee
        if self.attach_link in ("base", "base_link", BASE_LINK):
            return BASE_LINK
        return agent.end_effector_link(self.attach_link)

    def _find(self, agent: Agent) -> SimObject | None:
        world = agent.world
        if self.target_object_id is not None:
            handle = world.handle_by_body_id.get(self.target_object_id)
            obj = world.objects.get(handle) if handle is not None else None
            if obj is None:
                self.fail(f"no object with id {self.target_object_id}")
            elif not obj.pickable:
                self.fail(f"{obj.name} is not pickable")
            elif self._held_elsewhere(agent, obj):
                obj = None
            return obj if self.status.value == "in_progress" else None
        assert self.target_position is not None
        b = world.bodies
        rows = np.flatnonzero(b["pickable"])
        rows = rows[b.handles[rows] != agent.handle]
        dist = np.linalg.norm(b["pos"][rows] - self.target_position, axis=1)
        near = rows[dist <= self.search_radius][
            np.argsort(dist[dist <= self.search_radius], kind="stable")
        ]
        held = None
        for row in near:
            candidate: SimObject = world.objects[int(b.handles[row])]
            if candidate.attached_to is None:
                return candidate
            held = held or candidate
        if held is not None:
            self._held_elsewhere(agent, held)
        else:
            where = ", ".join(f"{v:.2f}" for v in self.target_position)
            self.fail(f"no pickable object within {self.search_radius} m of ({where})")
        return None


class Drop(LegsAction):
    """Put down a carried object at `drop_pose` (or offset from where it is).

    Args:
        drop_pose: where the object ends up; the robot drives there (see the approach options).
        drop_relative_pose: instead of `drop_pose`, release the object at its current pose
            composed with this offset (handy for loads on arms).
        target_object_id: which carried object (PyBullet id); by default the first one.
        place_gently: put it exactly at `drop_pose`; False releases it `drop_height` metres
            higher so that, with physics on, it falls.
        use_approach: as for `Pick`.
        approach_offset: as for `Pick`.
        drop_offset: the robot stops this many metres short of `drop_pose`.
        reach: metres `drop_pose` (the object's box there) may be from the robot's body or
            gripper; farther, the Drop fails and the robot keeps the object.
    """

    def __init__(
        self,
        drop_pose: Pose | None = None,
        drop_relative_pose: Pose | None = None,
        target_object_id: int | None = None,
        place_gently: bool = True,
        use_approach: bool = True,
        approach_offset: float = 1.0,
        drop_offset: float = 0.0,
        drop_height: float = 0.2,
        joint_targets: Any = None,
        ee_target_position: ArrayLike | None = None,
        continue_on_ik_failure: bool = True,
        reach: float = DEFAULT_REACH_M,
    ) -> None:
        super().__init__()
        self.reach = check_reach(reach)
        self.arm = _arm_move(joint_targets, ee_target_position)
        self.continue_on_ik_failure = continue_on_ik_failure
        if drop_pose is None and drop_relative_pose is None:
            raise ConfigError("Drop needs drop_pose or drop_relative_pose")
        for name, value in (("drop_pose", drop_pose), ("drop_relative_pose", drop_relative_pose)):
            if value is not None and not isinstance(value, Pose):
                raise ConfigError(f"{name} must be a Pose, got {value!r}")
        self.drop_pose = drop_pose
        self.drop_relative_pose = drop_relative_pose
        self.target_object_id = target_object_id
        self.place_gently = place_gently
        self.use_approach = use_approach
        self.approach_offset = check_offset("approach_offset", approach_offset)
        self.drop_offset = check_offset("drop_offset", drop_offset)
        self.drop_height = check_offset("drop_height", drop_height)
        self.target: SimObject | None = None

    def start(self, agent: Agent) -> None:
        """Check there is something to put down, then set off for the drop pose."""
        held = agent.get_attached_objects()
        if self.target_object_id is not None:
            held = [o for o in held if o.object_id == self.target_object_id]
            if not held:
                self.fail(f"{agent.name} does not hold object {self.target_object_id}")
                return
        elif not held:
            self.fail(f"nothing to drop: {agent.name} holds no object")
            return
        self.target = held[0]
        legs: list[tuple[Pose, bool]] = []
        if self.use_approach and self.drop_pose is not None:
            target_xy = np.array(self.drop_pose.position[:2])
            legs = approach_legs(agent, target_xy, self.approach_offset, self.drop_offset)
        self.begin_legs(agent, legs, act_at=1 if len(legs) == 3 else 0)

    def act(self, agent: Agent) -> None:
        """Detach the object at the drop pose (or its offset), if the pose is within reach."""
        obj = self.target
        if obj is None or obj.is_removed or obj.attached_to is not agent:
            self.fail(f"{agent.name} no longer holds the object to drop")
            return
        if self.drop_pose is not None:
            link = int(agent.world.bodies["parent_link"][agent.world.bodies.row(obj.handle)])
            too_far = out_of_reach(agent, link, obj, self.reach, self.drop_pose)
            if too_far is not None:
                self.fail(too_far)
                return
        before = obj.get_pose()
        agent.detach_object(obj)
        agent.world.intended.release(agent.handle, obj.handle)  # until the gripper is clear
        if self.drop_relative_pose is not None:
            place = before.compose(self.drop_relative_pose)
        else:
            assert self.drop_pose is not None
            place = self.drop_pose
            if not self.place_gently and agent.world.physics and obj.mass > 0:
                place = Pose((place.x, place.y, place.z + self.drop_height), place.orientation)
        obj.set_pose(place)


def _arm_move(joint_targets: Any, ee_target_position: ArrayLike | None) -> ArmMove | None:
    if joint_targets is not None and ee_target_position is not None:
        raise ConfigError("give joint_targets or ee_target_position, not both")
    if joint_targets is None and ee_target_position is None:
        return None
    return ArmMove(joint_targets=joint_targets, ee_position=ee_target_position)


def _finite_xyz(value: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} must be 3 finite numbers (x, y, z), got {value!r}")
    return arr


PickAction = Pick
DropAction = Drop
