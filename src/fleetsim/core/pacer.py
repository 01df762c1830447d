"""`Pacer`: when to step and when to sleep so simulated time tracks wall time x `target_rtf`.

The absolute-time scheme of the real-time sync design: compare the simulated time that should
have passed since `start` with the simulated time that did, with these corrections: a monotonic
clock; a sleep of `(-time_diff) / target_rtf - last_step_time` when ahead; `start` re-based after a
pause so there is no catch-up burst; `target_rtf <= 0` never sleeps. Ordinary lag is caught up
at most `max_steps_per_frame` steps per frame; a backlog of more than `MAX_CATCH_UP_S` of wall
time (a long callback, a stalled machine) is dropped (the schedule re-anchored) instead of being
caught up in a burst.
"""

from __future__ import annotations

import time
from collections.abc import Callable

MAX_CATCH_UP_S = 0.5  # wall seconds of lag still caught up; older lag is given up


class Pacer:
    """Plans frames: each frame either takes 1..max_steps_per_frame steps or sleeps."""

    def __init__(
        self,
        timestep: float,
        target_rtf: float,
        max_steps_per_frame: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.timestep = timestep
        self.target_rtf = target_rtf
        self.max_steps_per_frame = max_steps_per_frame
        self._clock = clock
        self._start_wall = clock()
        self._start_sim = 0.0
        self.dropped_s = 0.0  # simulated seconds of backlog given up (see the module docstring)

    def start(self, sim_time: float) -> None:
        """Anchor pacing at the current wall time and `sim_time` (also used on resume)."""
        self._start_wall = self._clock()
        self._start_sim = sim_time

    def plan(self, sim_time: float, last_step_s: float) -> tuple[int, float]:
        """(steps to take now, seconds to sleep instead). Exactly one of them is non-zero."""
        if self.target_rtf <= 0:
            return self.max_steps_per_frame, 0.0
        elapsed = self._clock() - self._start_wall
        time_diff = elapsed * self.target_rtf - (sim_time - self._start_sim)
        if time_diff > 0:
            allowed = max(
                self.max_steps_per_frame * self.timestep, MAX_CATCH_UP_S * self.target_rtf
            )
            if time_diff > allowed:  # too far behind: forgive the rest
                self.dropped_s += time_diff - allowed
                self._start_wall += (time_diff - allowed) / self.target_rtf
                time_diff = allowed
            steps = int(time_diff / self.timestep)
            return max(1, min(steps, self.max_steps_per_frame)), 0.0
        sleep_s = -time_diff / self.target_rtf - last_step_s
        if sleep_s > 0:
            return 0, sleep_s
        return 1, 0.0
