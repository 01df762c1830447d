"""`GridSpawnParams`: where a grid of objects goes. Positions fill rows along x, then y."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fleetsim.errors import ConfigError


@dataclass(frozen=True)
class GridSpawnParams:
    """A rectangular area filled with a grid of `ceil(sqrt(n))` columns.

    Without `spacing` the grid spreads evenly over [x_min, x_max] x [y_min, y_max]; with `spacing`
    (metres, or (dx, dy)) it starts at (x_min, y_min) and must fit inside the area. Objects stand at
    height `z_min`, facing `yaw` (radians). `offset` shifts the whole grid.
    """

    x_min: float = 0.0
    x_max: float = 10.0
    y_min: float = 0.0
    y_max: float = 10.0
    z_min: float = 0.0
    z_max: float = 0.0
    spacing: float | tuple[float, float] | None = None
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw: float = 0.0

    def __post_init__(self) -> None:
        values = (
            self.x_min,
            self.x_max,
            self.y_min,
            self.y_max,
            self.z_min,
            self.z_max,
            self.yaw,
            *self.offset,
        )
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
            raise ConfigError(f"GridSpawnParams values must be finite numbers: {self}")
        if self.x_max < self.x_min or self.y_max < self.y_min:
            raise ConfigError(
                f"grid bounds are inverted: x {self.x_min}..{self.x_max}, "
                f"y {self.y_min}..{self.y_max}"
            )
        if self.spacing is not None and min(np.atleast_1d(self.spacing)) <= 0:
            raise ConfigError(f"grid spacing must be > 0 m, got {self.spacing}")

    def positions(self, count: int) -> np.ndarray:
        """Grid positions, shape (count, 3)."""
        if count < 0:
            raise ConfigError(f"cannot spawn {count} objects")
        if count == 0:
            return np.zeros((0, 3))
        cols = math.ceil(math.sqrt(count))
        rows = math.ceil(count / cols)
        if self.spacing is None:
            xs = (
                np.linspace(self.x_min, self.x_max, cols)
                if cols > 1
                else np.array([(self.x_min + self.x_max) / 2])
            )
            ys = (
                np.linspace(self.y_min, self.y_max, rows)
                if rows > 1
                else np.array([(self.y_min + self.y_max) / 2])
            )
        else:
            dx, dy = np.broadcast_to(np.asarray(self.spacing, dtype=np.float64), (2,))
            xs = self.x_min + dx * np.arange(cols)
            ys = self.y_min + dy * np.arange(rows)
            if xs[-1] > self.x_max + 1e-9 or ys[-1] > self.y_max + 1e-9:
                raise ConfigError(
                    f"{count} objects at spacing {self.spacing} need x up to {xs[-1]:g} and "
                    f"y up to {ys[-1]:g}, beyond x_max={self.x_max:g} / y_max={self.y_max:g}: "
                    "widen the area or reduce the spacing"
                )
        gx, gy = np.meshgrid(xs, ys)
        grid = np.column_stack((gx.ravel(), gy.ravel(), np.full(gx.size, self.z_min)))[:count]
        result: np.ndarray = grid + np.asarray(self.offset)
        return result
