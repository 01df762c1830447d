"""`World`: the state one simulation's bodies act on, and the rules for writing poses.

The body table is the truth. Writes inside a step are buffered (row written, marked moved and
dirty); writes outside a step reach PyBullet at once. Dirty rows are pushed in the pose flush
(eager sync) or only when something is about to read PyBullet (lazy sync).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fleetsim.backend import Backend
from fleetsim.collision.intended import IntendedContacts
from fleetsim.control import MotionSystem
from fleetsim.errors import ObjectRemovedError
from fleetsim.events import EventBus
from fleetsim.geometry import quat
from fleetsim.objects import attachments, joint_sync
from fleetsim.objects.contacts import ContactEvents
from fleetsim.objects.deferred import SHARED_COLUMNS, BoxRecipe, Recipes, Template, UrdfRecipe
from fleetsim.scheduling import CallbackScheduler
from fleetsim.sensors import Lidars, SafetyFields
from fleetsim.site import NavGraph, Site
from fleetsim.state import BodyTable, JointTable

IntArray = NDArray[np.int64]


class ActionTicker(Protocol):
    """What a step needs of the action runner the simulation core installs (`world.actions`,
    a `fleetsim.actions.ActionSystem`): wake the actions of robots that arrived."""

    def tick(self, now: float, dt: float, arrived: IntArray, joints_done: IntArray) -> None:
        """Advance the actions by `dt` at `now`; `arrived`, `joints_done`: motion rows."""


class SiteDoors(Protocol):
    """What actions that pass doors need of the site's doors (`world.doors`, the core's
    `fleetsim.devices.Doors`)."""

    def __getitem__(self, name: str) -> Any:
        """The door `name` (its `ends`)."""

    def request(self, name: str, requester: str, open: bool) -> Any:
        """`requester` wants the door open (or no longer)."""

    def is_open(self, name: str) -> bool:
        """Whether the door is open."""

    def crossings_of(self, graph: NavGraph) -> dict[int, str]:
        """The door each of the graph's lanes passes through, by lane."""


class HasWorld(Protocol):
    """Anything that owns a `World`; in practice a `MultiRobotSimulationCore`."""

    @property
    def world(self) -> World:
        """The simulation's `World`."""


class World:
    """Bodies, their Python handles, the backend, and whether a step is in progress."""

    def __init__(
        self,
        backend: Backend,
        events: EventBus,
        scheduler: CallbackScheduler,
        *,
        physics: bool,
        eager_sync: bool,
        lazy_bodies: bool = False,
    ) -> None:
        self.backend = backend
        self.events = events
        self.scheduler = scheduler
        self.physics = physics
        self.eager_sync = eager_sync
        self.lazy_bodies = lazy_bodies  # robots may wait for their PyBullet body (deferred.py)
        self.recipes = Recipes()
        self.profiles: dict[str, Any] = {}  # RobotProfile by URDF path (Agent.profile)
        self.bodies = BodyTable()
        self.motion = MotionSystem(self.bodies)
        self.joints = JointTable()
        self.arms_moved: set[int] = set()  # robots whose joints moved since the last box refresh
        self.actions: ActionTicker | None = None  # installed by the simulation core
        self.intended = IntendedContacts()  # the collision system's, installed by the core
        self.site: Site | None = None  # the navigation graph robots route on (sim.set_site)
        self.doors: SiteDoors | None = None  # the site's doors (sim.doors), for actions that pass
        self.lidars = Lidars()  # every lidar, by model (sim.lidars)
        self.safety = SafetyFields()  # robots guarded by safety fields (sim.safety)
        self.objects: dict[int, Any] = {}
        self.contacts = ContactEvents(events, backend, self.objects)
        self.handle_by_body_id: dict[int, int] = {}
        self.links = attachments.AttachmentGraph()
        self.in_step = False
        self.time = 0.0  # simulated seconds, kept by the simulation core
        self._body_facts: dict[
            str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, bool]
        ] = {}

    # -- step state ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def stepping(self) -> Iterator[None]:
        """Mark the world as inside a step; always cleared, even when a callback raises."""
        self.in_step = True
        try:
            yield
        finally:
            self.in_step = False

    # -- bodies -------------------------------------------------------------------------------

    def add_body(self, body_id: int, owner_factory: Any, **columns: Any) -> Any:
        """Register a PyBullet body as a new row and its Python handle object.

        `owner_factory(handle)` builds the handle object. If anything fails, the PyBullet body is
        removed so nothing half-created is left behind.
        """
        handle: int | None = None
        try:
            handle = int(self.bodies.add(1, body_id=body_id, **columns)[0])
            obj = owner_factory(handle)
        except BaseException:
            if handle is not None:
                self.bodies.remove(handle)
            self.backend.remove_body(body_id)
            raise
        self.objects[handle] = obj
        self.handle_by_body_id[body_id] = handle
        self.events.emit("object_spawned", obj)
        return obj

    def add_bodies(self, body_ids: IntArray, owner_factory: Any, **columns: Any) -> list[Any]:
        """`add_body` for many bodies at once (columns as arrays, one row per body); returns
        the handle objects. If anything fails, the PyBullet bodies are removed."""
        handles = None
        try:
            handles = self.bodies.add(len(body_ids), body_id=body_ids, **columns)
            objs = [owner_factory(int(h)) for h in handles]
        except BaseException:
            if handles is not None:
                for h in handles.tolist():
                    self.bodies.remove(h)
            for body in np.asarray(body_ids).tolist():
                self.backend.remove_body(body)
            raise
        for h, body, obj in zip(handles.tolist(), np.asarray(body_ids).tolist(), objs, strict=True):
            self.objects[h] = obj
            self.handle_by_body_id[body] = h
            self.events.emit("object_spawned", obj)
        return objs

    def adopt_body(
        self,
        body_id: int,
        owner_factory: Any,
        facts_key: str | None = None,
        mobile: bool = False,
        **columns: Any,
    ) -> Any:
        """Register a body PyBullet already holds (a loaded URDF, a user's body).

        Reads its link-frame pose, inertial offset, local box and what its shapes are. Bodies
        loaded from the same file share all but the pose, so pass `facts_key` (e.g. the file
        path) to measure them once. A `mobile` robot (one that drives) built of primitives on
        fixed or continuous joints may collide by its footprint (`collision_footprints`).
        """
        facts = self._body_facts.get(facts_key) if facts_key else None
        if facts is None:
            offset_pos, offset_quat = self.backend.inertial_offset(body_id)
            lo, hi = self.backend.local_aabb(body_id)
            box = self.backend.is_single_box(body_id)
            rigid = self.backend.is_rigid_primitives(body_id)
            facts = (np.array(offset_pos), np.array(offset_quat), lo, hi, box, rigid)
            if facts_key:
                self._body_facts[facts_key] = facts
        com_pos, com_quat, lo, hi, box, rigid = facts
        link_p, link_q = self.backend.read_link_pose(body_id, com_pos.tolist(), com_quat.tolist())
        has_offset = bool(np.any(com_pos != 0) or np.any(com_quat[:3] != 0))
        return self.add_body(
            body_id,
            owner_factory,
            pos=link_p,
            quat=link_q,
            aabb_local_min=lo,
            aabb_local_max=hi,
            com_pos=com_pos,
            com_quat=com_quat,
            has_com_offset=has_offset,
            exact_box=box,
            footprint=mobile and rigid and not box,
            **columns,
        )

    # -- bodies without a PyBullet body yet (lazy creation, `fleetsim.objects.deferred`) ---------

    def template_for(self, recipe: UrdfRecipe) -> Template | None:
        """The template to add a body from `recipe` as a row only, or None to make it now."""
        return self.recipes.template(recipe) if self.lazy_bodies else None

    def learn_template(self, recipe: UrdfRecipe, handle: int) -> None:
        """After a real body from `recipe` was added: let later copies wait for theirs, when the
        arrays answer its collisions (a single box or a footprint) and physics does not move it."""
        b = self.bodies
        row = b.row(handle)
        if (
            self.lazy_bodies
            and self.recipes.template(recipe) is None
            and not b["dynamic"][row]
            and (b["exact_box"][row] or b["footprint"][row])
        ):
            self.recipes.learn(recipe, {k: b[k][row] for k in SHARED_COLUMNS})

    def add_deferred(
        self,
        template: Template,
        positions: np.ndarray,
        orientations: np.ndarray,
        owner_factory: Any,
        **columns: Any,
    ) -> list[Any]:
        """Add bodies from `template` as rows only, link frames at positions (N, 3) and unit
        quaternions (N, 4). `owner_factory(handles)` builds the N handle objects."""
        recipes = np.full(len(positions), template.recipe, dtype=np.int64)
        columns = {**template.columns, **columns, "pos": positions, "quat": orientations}
        return self.add_waiting(recipes, owner_factory, **columns)

    def add_waiting(self, recipes: IntArray, owner_factory: Any, **columns: Any) -> list[Any]:
        """Add bodies as rows only, each waiting for its body from its recipe (`recipes`, an
        index into the world's recipes per row); `owner_factory(handles)` builds the handle
        objects."""
        handles = self.bodies.add(len(recipes), recipe=recipes, **columns)
        try:
            objs = list(owner_factory(handles))
        except BaseException:
            for h in handles.tolist()[::-1]:
                self.bodies.remove(h)
            raise
        emit = self.events.emit
        for h, obj in zip(handles.tolist(), objs, strict=True):
            self.objects[h] = obj
            emit("object_spawned", obj)
        return objs

    def realize(self, rows: IntArray) -> None:
        """Make the PyBullet bodies of those of `rows` that wait for one, at their poses."""
        if not self.recipes or not rows.size:
            return
        b = self.bodies
        rows = rows[b["body_id"][rows] < 0]
        rows = rows[b["recipe"][rows] >= 0]
        recipes = self.recipes.recipes
        kinds = b["recipe"][rows]
        for kind in np.unique(kinds).tolist():  # (boxes of one recipe: one batch)
            recipe, mine = recipes[kind], rows[kinds == kind]
            if isinstance(recipe, BoxRecipe):
                made = recipe.create_many(self.backend, b["pos"][mine], b["quat"][mine])
            else:
                made = np.array(
                    [recipe.create(self.backend, b["pos"][r].tolist(), b["quat"][r].tolist())
                     for r in mine.tolist()]
                )  # fmt: skip
            b["body_id"][mine] = made
            b["dirty"][mine] = False
            for body, handle in zip(made.tolist(), b.handles[mine].tolist(), strict=True):
                self.handle_by_body_id[body] = handle

    def body_id_of(self, handle: int) -> int:
        """The PyBullet id of a live body, made now if it waited for one."""
        b = self.bodies
        row = b.row(handle)
        if b["body_id"][row] < 0:
            self.realize(np.array([row]))
        return int(b["body_id"][row])

    def remove_body(self, handle: int) -> None:
        """Detach, remove from PyBullet and the table, and announce it."""
        row = self.bodies.row(handle)
        obj = self.objects[handle]
        for child in list(self.links.children(handle)):
            self.detach(handle, child)
        parent = int(self.bodies["parent"][row])
        if parent >= 0:
            self.detach(parent, handle)
        body_id = int(self.bodies["body_id"][row])
        self.motion.remove_body(handle)
        for joint_row in sorted(
            joint_sync.joint_rows_of(self, np.array([handle])).tolist(), reverse=True
        ):
            self.joints.remove(int(self.joints.handles[joint_row]))
        self.arms_moved.discard(handle)
        self.lidars.drop_owner(handle)
        self.safety.release(handle)
        if body_id >= 0:
            self.backend.remove_body(body_id)
        self.bodies.remove(handle)
        del self.objects[handle]
        self.handle_by_body_id.pop(body_id, None)
        self.scheduler.remove_owner(obj)
        self.contacts.forget(handle)
        self.events.emit("object_removed", obj)

    def clear(self) -> None:
        """Forget every body (the backend has been reset separately)."""
        self.bodies.clear()
        self.motion.clear()
        self.joints.clear()
        self.arms_moved.clear()
        self.lidars.clear()
        self.safety.clear()
        self.contacts.reset()
        self._body_facts.clear()
        self.recipes.clear()
        self.profiles.clear()
        self.objects.clear()
        self.handle_by_body_id.clear()
        self.links = attachments.AttachmentGraph()

    # -- poses --------------------------------------------------------------------------------

    def write_poses(
        self, handles: ArrayLike, positions: ArrayLike, orientations: ArrayLike | None
    ) -> None:
        """Set poses of bodies: handles (N,), positions (N, 3), orientations (N, 4) or None.

        Inside a step the write is buffered; outside it reaches PyBullet at once, together with
        the children attached to these bodies.
        """
        self._write(self.bodies.rows(handles), positions, orientations)

    def write_pose(self, handle: int, position: ArrayLike, orientation: ArrayLike | None) -> None:
        """`write_poses` for one body, without the array overhead."""
        self._write(self.bodies.row(handle), position, orientation)

    def _write(
        self, rows: int | IntArray, position: ArrayLike, orientation: ArrayLike | None
    ) -> None:
        b = self.bodies
        b["pos"][rows] = position
        if orientation is not None:
            b["quat"][rows] = orientation
        b["moved"][rows] = True
        b["dirty"][rows] = True
        if not self.in_step:
            self._apply_now(np.atleast_1d(rows))

    def _apply_now(self, rows: IntArray) -> None:
        """Outside a step: carry attached children, then push the written rows to PyBullet."""
        if self.links:
            attachments.follow(self)
            rows = np.flatnonzero(self.bodies["dirty"] & self.bodies["moved"])
        self.push_rows(rows)

    def push_rows(self, rows: IntArray) -> int:
        """Push the given rows' poses to PyBullet and mark them clean; returns how many bodies
        were pushed."""
        b = self.bodies
        if rows.size and self.recipes:  # rows without a body get one at their pose when needed
            b["dirty"][rows] = False
            rows = rows[b["body_id"][rows] >= 0]
        if rows.size:
            pos, orn = b["pos"][rows], b["quat"][rows]
            offset = b["has_com_offset"][rows]
            if offset.any():  # PyBullet wants the inertial frame: link pose * com offset
                com_q = b["com_quat"][rows]
                pos = np.where(offset[:, None], pos + quat.rotate(orn, b["com_pos"][rows]), pos)
                orn = np.where(offset[:, None], quat.multiply(orn, com_q), orn)
            self.backend.push_poses(b["body_id"][rows], pos, orn)
            b["dirty"][rows] = False
        return int(rows.size)

    def sync_rows(self, rows: IntArray) -> None:
        """Make PyBullet hold `rows` as they are: their bodies (made now if they waited for
        one), poses and joints."""
        self.realize(rows)
        self.push_rows(rows[self.bodies["dirty"][rows]])
        if len(self.joints):
            joint_sync.push_joint_rows(
                self, joint_sync.joint_rows_of(self, self.bodies.handles[rows])
            )

    def sync(self) -> int:
        """Make PyBullet hold the whole world: every body (those that waited for one are made),
        pose and joint. Returns how many bodies were pushed."""
        if self.recipes:
            self.realize(np.flatnonzero(self.bodies["body_id"] < 0))
        return self._push_dirty()

    def _push_dirty(self) -> int:
        pushed = self.push_rows(np.flatnonzero(self.bodies["dirty"]))
        if len(self.joints):
            joint_sync.push_joint_rows(self, np.flatnonzero(self.joints["dirty"]))
        return pushed

    def flush(self) -> int:
        """The pose flush of a step: push dirty rows under eager sync, keep them under lazy."""
        return self._push_dirty() if self.eager_sync else 0

    def read_back_dynamic(self) -> int:
        """After a physics step, copy the poses of physics-driven bodies into the table."""
        b = self.bodies
        rows = np.flatnonzero(b["dynamic"])
        if rows.size:
            pos, orn = self.backend.read_poses(b["body_id"][rows])
            offset = b["has_com_offset"][rows]
            if offset.any():  # link pose = inertial pose * inverse(com offset)
                link_q = quat.multiply(orn, quat.conjugate(b["com_quat"][rows]))
                pos = np.where(offset[:, None], pos - quat.rotate(link_q, b["com_pos"][rows]), pos)
                orn = np.where(offset[:, None], link_q, orn)
            b["pos"][rows], b["quat"][rows] = pos, orn
            b["moved"][rows] = True
        return int(rows.size)

    # -- attachments --------------------------------------------------------------------------

    def attach(
        self, parent: int, child: int, rel_pos: ArrayLike, rel_quat: ArrayLike, link: int = -1
    ) -> None:
        """Attach `child` to `parent` (or its `link`) at the relative position and rotation."""
        attachments.attach(self, parent, child, rel_pos, rel_quat, link)

    def detach(self, parent: int, child: int) -> None:
        """Detach `child` from `parent`; it stays where it is."""
        attachments.detach(self, parent, child)

    def object(self, handle: int) -> Any:
        """The object with row handle `handle`."""
        try:
            return self.objects[handle]
        except KeyError:
            raise ObjectRemovedError(f"no live body with handle {handle}") from None
