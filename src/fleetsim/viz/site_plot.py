"""A PNG of a site: obstacles, lanes (arrows for one-way ones) and named places (matplotlib)."""

from __future__ import annotations

from pathlib import Path

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
    graph, obstacles = site.graph, site.obstacles
    fig, ax = plt.subplots(figsize=(10, 8), dpi=120)
    if site.grid is not None:
        g = site.grid
        extent = (0.0, g.width * g.cell_size, 0.0, g.height * g.cell_size)
        ax.imshow(g.blocked, cmap="Greys", extent=extent, interpolation="nearest", alpha=0.8)
    else:
        for (x, y, _), (hx, hy, _), yaw in zip(
            obstacles.centres, obstacles.half_extents, obstacles.yaws, strict=True
        ):
            corner = np.array([x, y]) - _rotate(np.array([hx, hy]), yaw)
            ax.add_patch(Rectangle(tuple(corner), 2 * hx, 2 * hy, angle=float(np.degrees(yaw)),
                                   color="0.35"))  # fmt: skip
    if graph.lane_count <= MAX_DRAWN_LANES:
        a, b = graph.xy[graph.lane_from], graph.xy[graph.lane_to]
        for (x0, y0), (x1, y1), two_way in zip(a, b, graph.bidirectional, strict=True):
            if two_way:
                ax.plot([x0, x1], [y0, y1], color="tab:blue", linewidth=1)
            else:
                ax.annotate(
                    "", (x1, y1), (x0, y0), arrowprops={"arrowstyle": "->", "color": "tab:orange"}
                )
        named = [k for k, name in enumerate(graph.names) if not _generated(name)]
        ax.scatter(graph.xy[named, 0], graph.xy[named, 1], s=12, color="tab:red", zorder=3)
        for k in named:
            ax.annotate(graph.names[k], graph.xy[k], fontsize=7, xytext=(3, 3),
                        textcoords="offset points")  # fmt: skip
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(title or site.source)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def _rotate(v: np.ndarray, yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _generated(name: str) -> bool:
    """Names fleetsim made up (unnamed building vertices "v12", grid cells "r3_c4")."""
    return (name[:1] == "v" and name[1:].isdigit()) or (name[:1] == "r" and "_c" in name)
