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
    (metres, (dx, dy) or (dx, dy, dz)) it starts at (x_min, y_min), uses as many columns as fit
    (at most `ceil(sqrt(n))`), and must fit inside the area; with a `dz`, further layers are
    stacked up to `z_max` when one layer is full. Objects stand at height `z_min`, facing `yaw`
    (radians). `offset` shifts the whole grid.
    """

    x_min: float = 0.0
    x_max: float = 10.0
    y_min: float = 0.0
    y_max: float = 10.0
    z_min: float = 0.0
    z_max: float = 0.0
    spacing: float | tuple[float, float] | tuple[float, float, float] | None = None
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
        if self.spacing is not None:
            spacing = np.atleast_1d(np.asarray(self.spacing, dtype=object))
            if spacing.ndim != 1 or len(spacing) not in (1, 2, 3):
                raise ConfigError(
                    f"grid spacing must be a number, [dx, dy] or [dx, dy, dz] in metres, "
                    f"got {self.spacing!r}"
                )
            # dx and dy > 0; a dz of 0 is a flat grid (as PyBulletFleet's configs write one)
            if not all(
                isinstance(v, int | float)
                and not isinstance(v, bool)
                and math.isfinite(v)
                and (v > 0 or (k == 2 and v == 0))
                for k, v in enumerate(spacing)
            ):
                raise ConfigError(
                    f"grid spacing must be finite and > 0 m (dz may be 0), got {self.spacing!r}"
                )

    def positions(self, count: int) -> np.ndarray:
        """Grid positions, shape (count, 3)."""
        if count < 0:
            raise ConfigError(f"cannot spawn {count} objects")
        if count == 0:
            return np.zeros((0, 3))
        if self.spacing is None:
            cols = math.ceil(math.sqrt(count))
            rows = math.ceil(count / cols)
            xs = _spread(self.x_min, self.x_max, cols)
            ys = _spread(self.y_min, self.y_max, rows)
            zs = np.array([self.z_min])
        else:
            xs, ys, zs = self._spaced(count)
        gz, gy, gx = np.meshgrid(zs, ys, xs, indexing="ij")
        grid = np.column_stack((gx.ravel(), gy.ravel(), gz.ravel()))[:count]
        result: np.ndarray = grid + np.asarray(self.offset)
        return result

    def _spaced(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Coordinates of a grid `spacing` apart: as many columns as fit, then rows, then
        layers (with a dz)."""
        spacing = np.atleast_1d(np.asarray(self.spacing, dtype=np.float64))
        dx, dy = (spacing[0], spacing[0]) if len(spacing) == 1 else spacing[:2]
        fit_x = math.floor((self.x_max - self.x_min) / dx + 1e-9) + 1
        fit_y = math.floor((self.y_max - self.y_min) / dy + 1e-9) + 1
        cols = max(1, min(math.ceil(math.sqrt(count)), fit_x))
        rows = min(math.ceil(count / cols), fit_y)
        layers = math.ceil(count / (cols * rows))
        if layers > 1:
            dz = spacing[2] if len(spacing) == 3 else None
            top = self.z_min + (dz or 0.0) * (layers - 1)
            if dz is None or top > self.z_max + 1e-9:
                raise ConfigError(
                    f"{count} objects at spacing {self.spacing} do not fit in x "
                    f"{self.x_min:g}..{self.x_max:g}, y {self.y_min:g}..{self.y_max:g} "
                    f"({cols} x {rows} fit): widen the area, reduce the spacing"
                    + (", or raise z_max for more layers" if dz is not None else "")
                )
        return (
            self.x_min + dx * np.arange(cols),
            self.y_min + dy * np.arange(rows),
            self.z_min + (spacing[2] if len(spacing) == 3 else 0.0) * np.arange(layers),
        )


def _spread(lo: float, hi: float, n: int) -> np.ndarray:
    return np.linspace(lo, hi, n) if n > 1 else np.array([(lo + hi) / 2])
