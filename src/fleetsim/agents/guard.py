"""`Guard`: an agent's safety fields (`fleetsim.sensors.fields`), read from one of its lidars."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

from fleetsim.errors import ConfigError
from fleetsim.sensors import FieldSet, SafetyFieldParams

if TYPE_CHECKING:
    from fleetsim.objects import World
    from fleetsim.sensors import Lidar


# (a fleet of one model asks for the same fields thousands of times: made once)
_footprint_fields = functools.lru_cache(maxsize=256)(SafetyFieldParams.for_footprint)


class Guard:
    """Mixin for `Agent`; expects `_world`, `handle`, `name`, `_motion` and `lidars`."""

    _world: World
    name: str
    _motion: int

    if TYPE_CHECKING:  # (the SimObject's)

        @property
        def handle(self) -> int:
            """The body's handle."""

        @property
        def lidars(self) -> list[Lidar]:
            """The body's lidars."""

    def set_safety_fields(
        self, params: SafetyFieldParams | dict[str, Any] | str | None = "auto"
    ) -> None:
        """Guard the robot by protective and warning fields read from its safety scanner (one
        of its lidars, `params.scanner`): an obstacle in the protective field stops it, one in
        the warning field slows it. "auto": rectangles ahead sized from its footprint, top
        speed and acceleration (`SafetyFieldParams.for_footprint`, read from its first lidar).
        None: no fields. Mount the lidar first."""
        world = self._world
        if params is None:
            world.safety.release(self.handle)
            self._set_safety_scale(1.0)
            return
        if params == "auto":
            params = self.auto_safety_fields()
        elif isinstance(params, str):
            raise ConfigError(
                f"safety fields are SafetyFieldParams, a mapping or 'auto', not {params!r}"
            )
        if isinstance(params, dict):
            given = dict(params)
            given["sets"] = tuple(
                s if isinstance(s, FieldSet) else FieldSet(**s) for s in given.get("sets", ())
            )
            params = SafetyFieldParams(**given)
        if self._motion < 0:
            raise ConfigError(f"{self.name} has a fixed base: safety fields stop a mobile robot")
        lidars = self.lidars
        if params.scanner >= len(lidars):
            raise ConfigError(
                f"{self.name} has {len(lidars)} lidar(s), so no scanner {params.scanner} for its "
                "safety fields: add its safety scanner first (robot.add_lidar(...))"
            )
        scanner = lidars[params.scanner]
        world.safety.guard(
            self.handle, self._motion, scanner.id, scanner.params, params, world.time
        )
        self._set_safety_scale(1.0)

    @property
    def safety_field_state(self) -> str | None:
        """Its field state: "clear", "warning" (slowed), "protective" (stopped); None without
        fields."""
        return self._world.safety.state_of(self.handle)

    def mute_safety_fields(self, muted: bool = True) -> None:
        """Turn the robot's fields off while it docks or handles a load (and on again): an
        obstacle in them then neither stops nor slows it."""
        self._world.safety.mute(self.handle, muted)

    def auto_safety_fields(self, scanner: int = 0) -> SafetyFieldParams:
        """Fields for this robot read from its lidar `scanner`: rectangles ahead sized from its
        footprint (its local box), top speed and acceleration (`for_footprint`)."""
        lidars = self.lidars
        if scanner >= len(lidars):
            raise ConfigError(
                f"{self.name} has {len(lidars)} lidar(s), so no scanner {scanner} for its safety "
                "fields: add its safety scanner first (robot.add_lidar(...))"
            )
        bodies, agents = self._world.bodies, self._world.motion.agents
        row = bodies.row(self.handle)
        low, high = bodies["aabb_local_min"][row], bodies["aabb_local_max"][row]
        centre = (low + high) / 2  # (the scanner's place is taken from the footprint's centre)
        limits = agents.row(self._motion)
        x, y = lidars[scanner].params.mount[:2]
        auto = _footprint_fields(
            float(high[0] - low[0]),
            float(high[1] - low[1]),
            max_speed=float(agents["max_v"][limits]),
            deceleration=float(agents["max_a"][limits]),
            mount=(x - float(centre[0]), y - float(centre[1])),
        )
        return dataclasses.replace(auto, scanner=scanner)

    def _set_safety_scale(self, scale: float) -> None:
        agents = self._world.motion.agents
        row = agents.row(self._motion)
        agents["safety_scale"][row] = scale
        agents["speed_scale"][row] = agents["command_scale"][row] * scale
