"""Attachments: children that ride on a parent, followed for the whole world in a few array ops.

A child stores its pose in the parent's frame (`rel_pos`, `rel_quat` columns). Children of moved
parents are updated level by level (children of roots first), so chains follow in one pass. With
physics on, a child with mass is held by a fixed PyBullet constraint instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.errors import ConfigError
from fleetsim.geometry import quat

if TYPE_CHECKING:  # annotations only; World imports this module
    from fleetsim.objects.world import World


class AttachmentGraph:
    """Parent -> children handles, with a cached breadth-first level order."""

    def __init__(self) -> None:
        self._children: dict[int, list[int]] = {}
        self._parent: dict[int, int] = {}
        self._levels: list[np.ndarray] | None = None
        self.constraints: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self._parent)

    def children(self, handle: int) -> list[int]:
        """The handles attached to `handle`."""
        return self._children.get(handle, [])

    def parent(self, handle: int) -> int | None:
        """The handle `handle` is attached to, or None."""
        return self._parent.get(handle)

    def ancestors(self, handle: int) -> list[int]:
        """The parent, its parent and so on, nearest first."""
        out = []
        while (handle := self._parent.get(handle, -1)) >= 0:
            out.append(handle)
        return out

    def link(self, parent: int, child: int) -> None:
        """Attach `child` to `parent`."""
        self._children.setdefault(parent, []).append(child)
        self._parent[child] = parent
        self._levels = None

    def unlink(self, parent: int, child: int) -> None:
        """Detach `child` from `parent`."""
        self._children[parent].remove(child)
        if not self._children[parent]:
            del self._children[parent]
        del self._parent[child]
        self._levels = None

    def levels(self) -> list[np.ndarray]:
        """Child handles grouped by depth: children of roots, then their children, and so on."""
        if self._levels is None:
            level = [c for c, p in self._parent.items() if p not in self._parent]
            levels = []
            while level:
                levels.append(np.array(level, dtype=np.int64))
                level = [c for h in level for c in self._children.get(h, [])]
            self._levels = levels
        return self._levels


def attach(
    world: World, parent: int, child: int, rel_pos: ArrayLike, rel_quat: ArrayLike, link: int = -1
) -> None:
    """Attach `child` to `parent` (its `link`, or base) at (rel_pos, rel_quat) in that frame.

    Everything is checked before anything is registered, so a bad call changes nothing.
    """
    graph = world.links
    if parent == child:
        raise ConfigError("an object cannot be attached to itself")
    if graph.parent(child) is not None:
        raise ConfigError("the object is already attached; detach it first")
    if child in graph.ancestors(parent):
        raise ConfigError("attaching would make a cycle (the parent rides on the child)")
    b = world.bodies
    prow, crow = b.row(parent), b.row(child)
    check_link(world, parent, link)
    rel_pos = np.asarray(rel_pos, dtype=np.float64)
    rq = quat.normalize(np.asarray(rel_quat, dtype=np.float64))
    if rel_pos.shape != (3,) or rq.shape != (4,) or not np.all(np.isfinite(np.r_[rel_pos, rq])):
        raise ConfigError("the relative pose must be finite: position (3,), quaternion (4,)")
    b["parent"][crow] = parent
    b["parent_link"][crow] = link
    b["rel_pos"][crow] = rel_pos
    b["rel_quat"][crow] = rq
    graph.link(parent, child)
    if world.physics and b["dynamic"][crow]:
        graph.constraints[child] = world.backend.add_fixed_constraint(
            int(b["body_id"][prow]),
            int(b["body_id"][crow]),
            np.asarray(rel_pos).tolist(),
            rq.tolist(),
        )
        b["constrained"][crow] = True
    # Snap to the attach pose now (and at once in PyBullet when outside a step).
    frame_pos, frame_quat = frame_of(world, parent, link)
    world.write_poses(
        [child], frame_pos + quat.rotate(frame_quat, rel_pos), quat.multiply(frame_quat, rq)
    )


def check_link(world: World, handle: int, link: int) -> None:
    """A link index must be -1 (the base) or one of the body's links."""
    if isinstance(link, bool) or not isinstance(link, int | np.integer):
        raise ConfigError(f"link must be a link index (int, -1 = base), got {link!r}")
    if link < -1:
        raise ConfigError(f"link must be -1 (the base) or a link index >= 0, got {link}")
    if link >= 0:
        count = world.backend.joints.link_count(world.body_id_of(handle))
        if link >= count:
            name = getattr(world.objects.get(handle), "name", f"body {handle}")
            valid = f"0..{count - 1}" if count else "none besides the base (-1)"
            raise ConfigError(f"{name} has no link {link}: its links are {valid}")


def frame_of(world: World, handle: int, link: int) -> tuple[np.ndarray, np.ndarray]:
    """World pose of a body's base (from the arrays) or of one of its links (from PyBullet)."""
    b = world.bodies
    row = b.row(handle)
    if link < 0:
        return b["pos"][row], b["quat"][row]
    world.sync_rows(np.array([row]))  # forward kinematics needs the current base pose and joints
    pos, orn = world.backend.joints.link_pose(int(b["body_id"][row]), link)
    return np.array(pos), np.array(orn)


def detach(world: World, parent: int, child: int) -> None:
    """Detach `child`; it stays where it is."""
    graph = world.links
    if graph.parent(child) != parent:
        raise ConfigError("the object is not attached to this parent")
    crow = world.bodies.row(child)
    world.bodies["parent"][crow] = -1
    world.bodies["parent_link"][crow] = -1
    world.bodies["constrained"][crow] = False
    graph.unlink(parent, child)
    cid = graph.constraints.pop(child, None)
    if cid is not None:
        world.backend.remove_constraint(cid)


def follow(world: World) -> int:
    """Move kinematic children of moved parents to their attach pose; returns rows updated."""
    b = world.bodies
    updated = 0
    for level in world.links.levels():
        rows = b.rows(level)
        rows = rows[~b["constrained"][rows]]
        on_link = b["parent_link"][rows] >= 0
        updated += _follow_links(world, rows[on_link])
        rows = rows[~on_link]
        prows = b.rows(b["parent"][rows])
        moved = b["moved"][prows]
        rows, prows = rows[moved], prows[moved]
        if not rows.size:
            continue
        pq = b["quat"][prows]
        b["pos"][rows] = b["pos"][prows] + quat.rotate(pq, b["rel_pos"][rows])
        b["quat"][rows] = quat.multiply(pq, b["rel_quat"][rows])
        b["moved"][rows] = True
        b["dirty"][rows] = True
        updated += rows.size
    return updated


def _follow_links(world: World, rows: np.ndarray) -> int:
    """Children attached to links (few: loads in grippers) follow by forward kinematics."""
    b = world.bodies
    count = 0
    for row in rows.tolist():
        parent = int(b["parent"][row])
        prow = b.row(parent)
        if not (b["moved"][prow] or parent in world.arms_moved):
            continue
        frame_pos, frame_quat = frame_of(world, parent, int(b["parent_link"][row]))
        b["pos"][row] = frame_pos + quat.rotate(frame_quat, b["rel_pos"][row])
        b["quat"][row] = quat.multiply(frame_quat, b["rel_quat"][row])
        b["moved"][row] = True
        b["dirty"][row] = True
        count += 1
    return count
