"""`StepProfiler`: per-phase wall times of each step, in milliseconds, with a rolling mean."""

from __future__ import annotations

import time
from collections import deque
from types import TracebackType

PROFILE_KEYS: tuple[str, ...] = (
    "phase1_update",
    "agent_update",
    "callbacks",
    "phase2_pose_flush",
    "step_simulation",
    "phase3_aabb_grid_flush",
    "collision_check",
    "collision_aabb",
    "collision_broadphase",
    "collision_narrowphase",
    "people",
    "sensors",
    "safety_fields",
    "total",
)


class _Section:
    """A reusable timer for one key: `with profiler.section("phase2_pose_flush"): ...`."""

    __slots__ = ("_key", "_owner", "_t0")

    def __init__(self, owner: StepProfiler, key: str) -> None:
        self._owner = owner
        self._key = key
        self._t0 = 0.0

    def __enter__(self) -> None:
        self._t0 = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._owner.current[self._key] += (time.perf_counter() - self._t0) * 1e3


class StepProfiler:
    """Times the phases of each step; keeps the last `window` steps for averages."""

    def __init__(self, window: int = 100) -> None:
        self._sections = {key: _Section(self, key) for key in PROFILE_KEYS}
        self._history: deque[dict[str, float]] = deque(maxlen=window)
        self.current: dict[str, float] = dict.fromkeys(PROFILE_KEYS, 0.0)
        self._t0 = 0.0

    def section(self, key: str) -> _Section:
        """A `with` block timed into phase `key`."""
        return self._sections[key]

    def begin(self) -> None:
        """Start timing a step."""
        self.current = dict.fromkeys(PROFILE_KEYS, 0.0)
        self._t0 = time.perf_counter()

    def end(self) -> dict[str, float]:
        """Finish the step; returns its times (ms)."""
        self.current["total"] = (time.perf_counter() - self._t0) * 1e3
        self._history.append(self.current)
        return self.current

    def mean(self) -> dict[str, float]:
        """Mean ms per key over the recorded window (zeros before the first step)."""
        n = len(self._history)
        if n == 0:
            return dict.fromkeys(PROFILE_KEYS, 0.0)
        return {key: sum(h[key] for h in self._history) / n for key in PROFILE_KEYS}

    def clear(self) -> None:
        """Forget the steps timed so far."""
        self._history.clear()
