"""Where traffic control's robots start: each on a node, which it holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleetsim.errors import ConfigError

if TYPE_CHECKING:
    from fleetsim.fleet.traffic import TrafficControl

NODE_SNAP_M = 0.25  # a robot this close to a node stands on it


def place_on_nodes(t: TrafficControl) -> None:
    """Each robot holds the node it starts on; a robot off every node, or two robots within
    `t.clearance` of each other, is an error naming them."""
    assert t.sim.site is not None  # (checked when built)
    where = t.sim.get_poses(t.handles)[0]
    nodes, dist = t.sim.site.nearest_nodes(where)
    pos = where[:, :2]
    for i, (p, k, d) in enumerate(zip(pos, nodes.tolist(), dist.tolist(), strict=True)):
        name = t.robots[i].name
        if d > NODE_SNAP_M:
            raise ConfigError(
                f"{name} at ({p[0]:.2f}, {p[1]:.2f}) is not on a node (the nearest, "
                f"'{t.graph.names[k]}', is {d:.2f} m away): start robots on nodes"
            )
        other = t.blocker(i, k)
        if other >= 0:
            raise ConfigError(
                f"{name} and {t.robots[other].name} start within {t.clearance:.2f} m "
                f"of each other (node '{t.graph.names[k]}'): start them farther apart"
            )
        t.owner[k] = i
        t.routes[i] = [k]
        t.next[i] = 1
        t._legs_of(i)
        t._refresh_xy(i)
