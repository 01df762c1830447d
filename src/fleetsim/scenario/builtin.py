"""Built-in behaviours for scenario files: `patrol`, `random_goals`, `shuttle`.

Each queues actions on its robot and chains the next one from the last one's `on_done`, so a
robot on its way costs no Python work per step. After a failed action they wait `retry_after_s`
before trying again (a failure is immediate, and retrying at once would never let time pass).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fleetsim.actions import Action, ActionStatus, Drop, MoveTo, Pick, Wait
from fleetsim.errors import ConfigError
from fleetsim.geometry import Path, Pose
from fleetsim.scenario.plugins import Plugin, register_plugin
from fleetsim.scenario.schema import GridSpec
from fleetsim.scenario.spec_base import Finite, NonNegative, Positive, Vec3


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retry_after_s: Positive = 1.0


class _RobotPlugin(Plugin):
    """A plugin that needs a robot that can drive."""

    def initialize(self) -> None:
        if self.robot is None:
            raise ConfigError(f"'{self.name}' is a robot plugin: list it under a robot's plugins")
        if not self.robot.drives:
            raise ConfigError(
                f"'{self.name}' needs a mobile robot; {self.robot.name} has a fixed base"
            )
        self.next_round(first=True)

    def next_round(self, first: bool = False) -> None:
        raise NotImplementedError

    def chain(self, actions: list[Action], failed: bool) -> None:
        if failed:
            actions.insert(0, Wait(self.params.retry_after_s))
        actions[-1].on_done = self._done
        self.robot.add_action_sequence(actions)

    def _done(self, agent: Any, action: Action) -> None:
        self.next_round()


@register_plugin("patrol")
class Patrol(_RobotPlugin):
    """Drive through `waypoints` ([x, y, z] each) in order, forever (or once: `loop: false`)."""

    class Params(_Params):
        """`waypoints`, `loop` and `tolerance`."""

        waypoints: list[Vec3] = Field(min_length=1)
        loop: bool = True
        tolerance: NonNegative = 0.05

    def next_round(self, first: bool = False) -> None:
        """Queue the drive through the waypoints (again, when looping)."""
        if first or self.params.loop:
            move = MoveTo(Path.from_positions(self.params.waypoints), self.params.tolerance)
            self.chain([move], failed=False)


@register_plugin("random_goals")
class RandomGoals(_RobotPlugin):
    """Drive to a random point of `area` [x_min, y_min, x_max, y_max], then to another, forever.

    Goals come from the simulation's seeded generator: the same seed gives the same goals.
    """

    class Params(_Params):
        """`area`, `z` and `tolerance`."""

        area: tuple[Finite, Finite, Finite, Finite]
        z: Finite = 0.0
        tolerance: NonNegative = 0.05
        pause_s: NonNegative = 0.0

    def next_round(self, first: bool = False) -> None:
        """Queue a drive to the next random goal."""
        x_min, y_min, x_max, y_max = self.params.area
        x, y = self.scene.rng.uniform((x_min, y_min), (x_max, y_max))
        actions: list[Action] = [
            MoveTo(Pose.from_xyz(float(x), float(y), self.params.z), self.params.tolerance, False)
        ]
        if self.params.pause_s > 0:
            actions.append(Wait(self.params.pause_s))
        self.chain(actions, failed=False)


@register_plugin("shuttle")
class Shuttle(_RobotPlugin):
    """Pick a load at `pick`, drop it at `drop`, bring it back, forever.

    With `pick_grid` / `drop_grid` instead, a robot of a grid uses the slot of its own index.
    `carry_height` places the load that high above the robot's base while carried.
    """

    class Params(_Params):
        """`pick`, `drop` (or the objects' places) and `carry_height`."""

        pick: Vec3 | None = None
        drop: Vec3 | None = None
        pick_grid: GridSpec | None = None
        drop_grid: GridSpec | None = None
        search_radius: Positive = 0.5
        approach_offset: NonNegative = 1.0
        carry_height: Finite | None = None

    def initialize(self) -> None:
        """Find the load and the places to shuttle between."""
        self._a = self._slot(self.params.pick, self.params.pick_grid, "pick")
        self._b = self._slot(self.params.drop, self.params.drop_grid, "drop")
        self._outbound = True
        self._trip: list[Action] = []
        super().initialize()

    def _slot(self, point: Vec3 | None, grid: GridSpec | None, what: str) -> Vec3:
        if (point is None) == (grid is None):
            raise ConfigError(f"shuttle needs exactly one of '{what}' or '{what}_grid'")
        if point is not None:
            return point
        assert grid is not None
        index = int(self.robot.user_data.get("index", 0))
        if index >= grid.count:
            raise ConfigError(
                f"{self.robot.name} is robot {index} of its grid but {what}_grid has only "
                f"{grid.count} slots: give {what}_grid a count of at least the number of robots"
            )
        x, y, z = grid.positions()[index]
        return (float(x), float(y), float(z))

    def next_round(self, first: bool = False) -> None:
        """Queue the next pick and drop."""
        failed = any(a.status is ActionStatus.FAILED for a in self._trip)
        if not first and not failed:
            self._outbound = not self._outbound
        start, end = (self._a, self._b) if self._outbound else (self._b, self._a)
        carry = (
            None
            if self.params.carry_height is None
            else Pose.from_xyz(0, 0, self.params.carry_height)
        )
        self._trip = [
            Pick(
                target_position=start,
                search_radius=self.params.search_radius,
                attach_relative_pose=carry,
                approach_offset=self.params.approach_offset,
            ),
            Drop(Pose(end), approach_offset=self.params.approach_offset),
        ]
        self.chain(list(self._trip), failed=failed)
