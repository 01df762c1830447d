"""A PNG of a site: obstacles, lanes (arrows for one-way ones) and named places (matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site import Site

MAX_DRAWN_LANES = 20_000  # beyond this (big grid maps) the obstacles alone are drawn


def plot_site(site: Site, path: str | Path, title: str = "") -> Path:
    """Write the site's picture to `path` (PNG); needs matplotlib (`fleetsim[viz]`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        raise ConfigError("drawing a site needs matplotlib: pip install 'fleetsim[viz]'") from None
    levels = site.graph.level_names
    # one level a row, full width: a building's floors stay readable on a page
    fig, axes = plt.subplots(
        len(levels), 1, figsize=(14, 6.5 * len(levels)), dpi=120, squeeze=False
    )
    for ax, level in zip(axes[:, 0], levels, strict=True):
        _draw(ax, site, level, Rectangle)
        name = title or site.source
        ax.set_title(f"{name}: {level}" if len(levels) > 1 else name)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def _draw(ax: Any, site: Site, level: str, rectangle: Any) -> None:
    """One level: its obstacles (a grid map's blocked cells), lanes and named places."""
    graph, obstacles = site.graph, site.obstacles
    if site.grid is not None:
        g = site.grid
        (x0, y0), size = g.origin, g.cell_size
        extent = (x0, x0 + g.width * size, y0, y0 + g.height * size)
        ax.imshow(g.blocked, cmap="Greys", extent=extent, interpolation="nearest", alpha=0.8)
    else:
        floors = [
            site.level_at(z - h)
            for z, h in zip(
                obstacles.centres[:, 2].tolist(), obstacles.half_extents[:, 2].tolist(), strict=True
            )
        ]
        for k in [k for k, f in enumerate(floors) if f == level]:
            (x, y, _), (hx, hy, _), yaw = (
                obstacles.centres[k],
                obstacles.half_extents[k],
                obstacles.yaws[k],
            )
            corner = np.array([x, y]) - _rotate(np.array([hx, hy]), yaw)
            ax.add_patch(
                rectangle(tuple(corner), 2 * hx, 2 * hy, angle=float(np.degrees(yaw)), color="0.35")
            )
    on = graph.level == graph.level_names.index(level)
    lanes = np.flatnonzero(on[graph.lane_from] & on[graph.lane_to])
    if len(lanes) <= MAX_DRAWN_LANES:
        a, b = graph.xy[graph.lane_from[lanes]], graph.xy[graph.lane_to[lanes]]
        for (x0, y0), (x1, y1), two_way in zip(a, b, graph.bidirectional[lanes], strict=True):
            if two_way:
                ax.plot([x0, x1], [y0, y1], color="tab:blue", linewidth=1)
            else:
                ax.annotate(
                    "", (x1, y1), (x0, y0), arrowprops={"arrowstyle": "->", "color": "tab:orange"}
                )
        named = [k for k in np.flatnonzero(on).tolist() if not _generated(graph.names[k])]
        ax.scatter(graph.xy[named, 0], graph.xy[named, 1], s=12, color="tab:red", zorder=3)
        for k in named:
            ax.annotate(
                graph.names[k], graph.xy[k], fontsize=7, xytext=(3, 3), textcoords="offset points"
            )
    for door in site.doors:
        if door.level == level:
            ax.plot(door.ends[:, 0], door.ends[:, 1], color="tab:purple", linewidth=3)
            ax.annotate(
                door.name,
                door.ends.mean(axis=0),
                fontsize=6,
                color="tab:purple",
                xytext=(0, -9),
                textcoords="offset points",
            )
    for lift in site.lifts:
        if level in lift.levels:
            ax.add_patch(
                rectangle(
                    tuple(lift.shaft()[0]),
                    lift.width + 0.1,
                    lift.depth + 0.1,
                    angle=float(np.degrees(lift.yaw)),
                    fill=False,
                    color="tab:green",
                    linewidth=2,
                )
            )
            ax.annotate(lift.name, (lift.x, lift.y), fontsize=7, color="tab:green")
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


def _rotate(v: np.ndarray, yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _generated(name: str) -> bool:
    """Names fleetsim made up (unnamed building vertices "v12" or "L2:v12", grid cells
    "r3_c4")."""
    name = name.rpartition(":")[2]
    return (name[:1] == "v" and name[1:].isdigit()) or (name[:1] == "r" and "_c" in name)
