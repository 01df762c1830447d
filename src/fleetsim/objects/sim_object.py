"""`SimObject`: a thin handle on one row of the body table (a single-link PyBullet body)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from fleetsim.errors import ConfigError
from fleetsim.geometry import Pose, ShapeParams, quat
from fleetsim.objects import attachments
from fleetsim.objects.deferred import BoxRecipe
from fleetsim.objects.params import SimObjectSpawnParams, collision_mode_of
from fleetsim.objects.world import HasWorld, World
from fleetsim.sensors import Lidar, LidarParams, lidar_params
from fleetsim.sensors.shapes import ray_shape_of
from fleetsim.state import CollisionMode

T = TypeVar("T", bound="SimObject")

ObjectCallback = Callable[[Any, float], Any]


def world_of(sim_core: HasWorld | None) -> World:
    """The `World` of a simulation (`sim_core`), or a `ConfigError` when there is none."""
    if sim_core is None or not isinstance(getattr(sim_core, "world", None), World):
        raise ConfigError("pass the simulation as sim_core=sim (a MultiRobotSimulationCore)")
    return sim_core.world


class SimObject:
    """A body in the simulation: pose, shape, mass, collision mode and attachments.

    Create objects with `SimObject.from_params(params, sim_core=sim)` or
    `SimObject.from_mesh(path, sim_core=sim)`. The object's state lives in the simulation's
    arrays; this handle reads and writes its row, so it stays cheap at fleet scale.
    """

    _default_name = "object"  # unnamed objects are called f"{_default_name}_{handle}"

    def __init__(
        self, world: World, handle: int, name: str | None, user_data: dict[str, Any] | None
    ) -> None:
        # Kept small: a fleet holds one handle per robot (the name and user data are made when
        # first asked for).
        self._world = world
        self._handle = handle
        self._name = name
        self._user_data = user_data or None

    @property
    def name(self) -> str:
        """The object's name (default: "object_<handle>", "agent_<handle>" for agents)."""
        return self._name if self._name is not None else f"{self._default_name}_{self._handle}"

    @name.setter
    def name(self, value: str) -> None:
        self._name = value
        if self._handle in self._world.objects:  # (a spawned object: recordings follow it)
            self._world.events.emit("object_renamed", self)

    @property
    def user_data(self) -> dict[str, Any]:
        """Your own data about this object (a dict, copied from the spawn params)."""
        if self._user_data is None:
            self._user_data = {}
        return self._user_data

    @user_data.setter
    def user_data(self, value: dict[str, Any]) -> None:
        self._user_data = value

    # -- creation -----------------------------------------------------------------------------

    @classmethod
    def from_params(
        cls: type[T], spawn_params: SimObjectSpawnParams, sim_core: HasWorld | None = None
    ) -> T:
        """Create the object described by `spawn_params` in `sim_core`."""
        if not isinstance(spawn_params, SimObjectSpawnParams):
            raise ConfigError(
                f"from_params needs a SimObjectSpawnParams, got {type(spawn_params).__name__}"
            )
        world = world_of(sim_core)
        visual, collision = spawn_params.shapes
        pose = spawn_params.initial_pose
        body_id = world.backend.create_body(
            collision, visual, spawn_params.mass, pose.position, pose.orientation
        )
        box = collision.local_aabb()
        if box is None:
            box = world.backend.local_aabb(body_id)
        obj: T = world.add_body(
            body_id,
            lambda h: cls(world, h, spawn_params.name, dict(spawn_params.user_data) or None),
            pos=pose.position,
            quat=pose.orientation,
            aabb_local_min=box[0],
            aabb_local_max=box[1],
            mass=spawn_params.mass,
            pickable=spawn_params.pickable,
            collision_mode=int(spawn_params.collision_mode),
            dynamic=world.physics and spawn_params.mass > 0,
            exact_box=collision.shape_type == "box"
            and collision.frame_orientation == (0.0, 0.0, 0.0, 1.0),
            ray_shape=ray_shape_of(collision),
        )
        return obj

    @classmethod
    def from_params_at(
        cls: type[T],
        spawn_params: SimObjectSpawnParams,
        positions: ArrayLike,
        orientations: ArrayLike,
        sim_core: HasWorld | None = None,
    ) -> list[T]:
        """Copies of `spawn_params` at positions (N, 3) with orientations (4,) or (N, 4).
        All or nothing: if one fails, those created are removed."""
        pos = np.asarray(positions, dtype=np.float64)
        orn = np.asarray(orientations, dtype=np.float64)
        if pos.ndim != 2 or pos.shape[1] != 3 or orn.shape not in ((4,), (len(pos), 4)):
            raise ConfigError(
                f"positions must be (N, 3) and orientations (4,) or (N, 4), got shapes "
                f"{pos.shape} and {orn.shape}"
            )
        orn = np.broadcast_to(orn, (len(pos), 4))
        created: list[T] = []
        try:
            for p, q in zip(pos.tolist(), orn.tolist(), strict=True):
                params = dataclasses.replace(spawn_params, initial_pose=Pose(p, q))
                created.append(cls.from_params(params, sim_core=sim_core))
        except BaseException:
            for obj in reversed(created):
                obj.remove()
            raise
        return created

    @classmethod
    def from_mesh(
        cls: type[T],
        mesh_path: str,
        pose: Pose | None = None,
        sim_core: HasWorld | None = None,
        *,
        collision_mesh_path: str | None = None,
        mesh_scale: Sequence[float] = (1.0, 1.0, 1.0),
        rgba_color: Sequence[float] = (0.7, 0.7, 0.7, 1.0),
        mass: float = 0.0,
        pickable: bool = False,
        collision_mode: CollisionMode | str = CollisionMode.NORMAL_3D,
        name: str | None = None,
        user_data: dict[str, Any] | None = None,
    ) -> T:
        """Create an object from a mesh file (.obj, .stl, .dae).

        `collision_mesh_path` gives a simpler mesh to collide with; by default the visual mesh.
        """
        visual = ShapeParams(
            "mesh", mesh_path=mesh_path, mesh_scale=tuple(mesh_scale), rgba_color=tuple(rgba_color)
        )
        collision = ShapeParams(
            "mesh", mesh_path=collision_mesh_path or mesh_path, mesh_scale=tuple(mesh_scale)
        )
        params = SimObjectSpawnParams(
            visual_shape=visual,
            collision_shape=collision,
            initial_pose=pose if pose is not None else Pose(),
            mass=mass,
            pickable=pickable,
            collision_mode=collision_mode_of(collision_mode),
            name=name,
            user_data=user_data or {},
        )
        return cls.from_params(params, sim_core=sim_core)

    @classmethod
    def static_boxes(
        cls: type[T],
        centres: ArrayLike,
        half_extents: ArrayLike,
        yaws: ArrayLike,
        sim_core: HasWorld | None = None,
        rgba_color: Sequence[float] = (0.55, 0.55, 0.6, 1.0),
        names: Sequence[str] | None = None,
        collides: bool = True,
    ) -> list[T]:
        """Many static boxes at once (a site's walls and blocked cells): centres and half
        extents (K, 3) in metres, yaws (K,) in radians, or orientations (K, 4) (x, y, z, w)
        for boxes turned about any axis; `names` (K) when given. Far faster than one
        `from_params` each; the boxes are static structure (never pickable, never moved by
        physics), or, with `collides=False`, bodies no check sees (a floor robots stand on)."""
        c = np.asarray(centres, dtype=np.float64)
        h = np.asarray(half_extents, dtype=np.float64)
        y = np.asarray(yaws, dtype=np.float64)
        if c.size == h.size == y.size == 0:
            return []
        k = len(c) if c.ndim == 2 else -1
        turns = y.shape in ((k,), (k, 4))
        if c.shape != (k, 3) or h.shape != (k, 3) or not turns:
            raise ConfigError(
                f"static_boxes needs centres (K, 3), half_extents (K, 3) and yaws (K,) or "
                f"orientations (K, 4), got {c.shape}, {h.shape} and {y.shape}"
            )
        if not (np.isfinite(c).all() and np.isfinite(y).all() and (h > 0).all()):
            raise ConfigError("static_boxes needs finite centres and yaws and half extents > 0")
        if names is not None and len(names) != k:
            raise ConfigError(f"static_boxes got {len(names)} names for {k} boxes")
        world = world_of(sim_core)
        q = quat.from_yaw(y) if y.ndim == 1 else quat.normalize(y)
        given = iter(names) if names is not None else None

        def made(handle: int) -> T:
            return cls(world, handle, None if given is None else next(given), {})

        columns = {
            "pos": c,
            "quat": q,
            "aabb_local_min": -h,
            "aabb_local_max": h,
            "mass": 0.0,
            "pickable": False,
            "collision_mode": int(CollisionMode.STATIC if collides else CollisionMode.DISABLED),
            "dynamic": False,
            "exact_box": True,
        }
        if world.lazy_bodies:  # rows only: each box gets its body when PyBullet is asked
            red, green, blue, alpha = (float(v) for v in rgba_color)
            sizes, size_of = np.unique(h, axis=0, return_inverse=True)  # a recipe a size
            index = [
                world.recipes.box(BoxRecipe((hx, hy, hz), (red, green, blue, alpha)))
                for hx, hy, hz in sizes.tolist()
            ]
            recipes = np.asarray(index, dtype=np.int64)[size_of.ravel()]
            return world.add_waiting(
                recipes, lambda handles: [made(int(x)) for x in handles], **columns
            )
        ids = world.backend.create_boxes(h, c, q, rgba_color)
        objs: list[T] = world.add_bodies(ids, made, **columns)
        return objs

    @classmethod
    def static_mesh(
        cls: type[T],
        vertices: ArrayLike,
        triangles: ArrayLike,
        sim_core: HasWorld | None = None,
        *,
        concave: bool = True,
        name: str | None = None,
        rgba_color: Sequence[float] = (0.55, 0.55, 0.6, 1.0),
    ) -> T:
        """A static mesh from vertices (V, 3) in world metres and triangles (T, 3) (indices):
        its triangles collide as they are (`concave`, the default), or its convex hull. The
        narrow phase asks PyBullet about its pairs (it is not a box)."""
        v = np.asarray(vertices, dtype=np.float64)
        t = np.asarray(triangles, dtype=np.int64)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or t.ndim != 2 or t.shape[1] != 3:
            raise ConfigError(
                f"static_mesh needs vertices (V >= 4, 3) and triangles (T, 3), got {v.shape} "
                f"and {t.shape}"
            )
        if not np.isfinite(v).all() or t.size == 0 or t.min() < 0 or t.max() >= len(v):
            raise ConfigError("static_mesh needs finite vertices and triangles that index them")
        world = world_of(sim_core)
        centre = (v.min(axis=0) + v.max(axis=0)) / 2
        body = world.backend.create_mesh_body(v - centre, t, centre.tolist(), rgba_color, concave)
        obj: T = world.adopt_body(
            body,
            lambda h: cls(world, h, name, {}),
            collision_mode=int(CollisionMode.STATIC),
        )
        return obj

    # -- sensors ------------------------------------------------------------------------------

    def add_lidar(self, params: LidarParams | dict[str, Any] | None = None, **fields: Any) -> Lidar:
        """Mount a 2-D lidar on this body: `params` (`LidarParams`, or a mapping of its fields;
        defaults when None), or its fields as keywords (`add_lidar(beams=64, rate=5)`). It scans
        from the next step on, at its rate; read it with `lidar.scan()`, or the whole fleet's
        at once from `sim.lidars.groups`."""
        if fields:
            if params is not None:
                raise ConfigError("add_lidar takes params or keyword fields, not both")
            params = fields
        world = self.world
        sensor = world.lidars.add(self.handle, lidar_params(params), world.time)
        return Lidar(world.lidars, sensor)

    @property
    def lidars(self) -> list[Lidar]:
        """The lidars on this body, in the order they were added."""
        world = self.world
        return [Lidar(world.lidars, s) for s in world.lidars.ids_of(self.handle)]

    # -- identity -----------------------------------------------------------------------------

    @property
    def world(self) -> World:
        """The simulation state this object lives in."""
        return self._world

    @property
    def handle(self) -> int:
        """Stable fleetsim handle (index into the simulation's arrays via the body table)."""
        return self._handle

    @property
    def _row(self) -> int:
        return self._world.bodies.row(self._handle)

    @property
    def object_id(self) -> int:
        """The PyBullet body id, for users who call PyBullet directly (pass `sim.client`).

        A robot that waited for its PyBullet body (lazy `body_creation`) gets it now."""
        return self._world.body_id_of(self._handle)

    @property
    def is_removed(self) -> bool:
        """Whether the object was removed (its handle no longer names a row)."""
        return (
            not self._world.bodies.is_alive(self._handle)
            or self._world.objects.get(self._handle) is not self
        )

    @property
    def mass(self) -> float:
        """Mass in kg (0: kinematic)."""
        return float(self._world.bodies["mass"][self._row])

    @property
    def pickable(self) -> bool:
        """Whether robots may pick it up."""
        return bool(self._world.bodies["pickable"][self._row])

    @pickable.setter
    def pickable(self, value: bool) -> None:
        self._world.bodies["pickable"][self._row] = bool(value)

    @property
    def collision_mode(self) -> CollisionMode:
        """How it takes part in collision checks (`CollisionMode`)."""
        return CollisionMode(int(self._world.bodies["collision_mode"][self._row]))

    def set_collision_mode(self, mode: CollisionMode | str) -> None:
        """Change how this object takes part in collision checks (takes effect next check)."""
        row = self._row
        self._world.bodies["collision_mode"][row] = int(collision_mode_of(mode))
        self._world.bodies["moved"][row] = True

    # -- pose ---------------------------------------------------------------------------------

    def get_pose(self) -> Pose:
        """The current pose: always up to date, even inside a step before PyBullet is written."""
        b, row = self._world.bodies, self._row
        return Pose.unchecked(tuple(b["pos"][row].tolist()), tuple(b["quat"][row].tolist()))

    def set_pose(self, pose: Pose) -> None:
        """Move the object. Buffered inside a step, immediate outside it; the last write wins."""
        if not isinstance(pose, Pose):
            raise ConfigError(f"set_pose needs a Pose, got {pose!r}; use set_pose_raw for arrays")
        self._world.write_pose(self._handle, pose.position, pose.orientation)

    def set_pose_raw(self, position: ArrayLike, orientation: ArrayLike | None = None) -> None:
        """Like `set_pose` from a position (3,) and optional quaternion (4,), without a Pose.

        The orientation is kept when None.
        """
        pos = np.asarray(position, dtype=np.float64)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            raise ConfigError(f"position must be 3 finite numbers, got {position!r}")
        orn = (
            None
            if orientation is None
            else quat.normalize(np.asarray(orientation, dtype=np.float64))
        )
        if orn is not None and orn.shape != (4,):
            raise ConfigError(f"orientation must be a quaternion (x, y, z, w), got {orientation!r}")
        self._world.write_pose(self._handle, pos, orn)

    # -- attachments --------------------------------------------------------------------------

    def attach_object(
        self, obj: SimObject, relative_pose: Pose | None = None, link: int = -1
    ) -> None:
        """Attach `obj` to this object (or to one of its links, by index); it follows every step.

        `relative_pose` is the child's pose in the parent's (link) frame; by default the child
        stays exactly where it is now. With physics on, a child with mass is held by a fixed
        constraint.
        """
        self.check_same_world(obj, "attach_object")
        if relative_pose is not None and not isinstance(relative_pose, Pose):
            raise ConfigError(f"relative_pose must be a Pose or None, got {relative_pose!r}")
        attachments.check_link(self._world, self._handle, link)
        if relative_pose is None:
            pos, orn = attachments.frame_of(self._world, self._handle, link)
            relative_pose = Pose(pos, orn).inverse().compose(obj.get_pose())
        self._world.attach(
            self._handle, obj.handle, relative_pose.position, relative_pose.orientation, link
        )

    def detach_object(self, obj: SimObject) -> None:
        """Detach `obj`; it stays where it is."""
        self.check_same_world(obj, "detach_object")
        self._world.detach(self._handle, obj.handle)

    def check_same_world(self, obj: object, what: str) -> None:
        """`obj` must be a live `SimObject` of this simulation."""
        if not isinstance(obj, SimObject):
            raise ConfigError(f"{what} needs a SimObject (or Agent), got {obj!r}")
        if obj._world is not self._world:
            raise ConfigError(f"{what}: {obj.name} belongs to another simulation than {self.name}")
        if obj.is_removed:
            raise ConfigError(f"{what}: {obj.name} was removed from the simulation")

    def get_attached_objects(self) -> list[SimObject]:
        """Objects attached to this one, in the order they were attached."""
        return [self._world.object(h) for h in self._world.links.children(self._handle)]

    def is_attached(self) -> bool:
        """Whether this object rides on another one."""
        return self._world.links.parent(self._handle) is not None

    @property
    def attached_to(self) -> SimObject | None:
        """The object this one rides on, or None."""
        parent = self._world.links.parent(self._handle)
        return None if parent is None else self._world.object(parent)

    # -- callbacks and lifetime ---------------------------------------------------------------

    def on(self, event: str, handler: Callable[[Any, Any], Any]) -> None:
        """Call `handler(self, other)` on "collision_started" / "collision_ended" of this object."""
        self._world.contacts.on(self._handle, event, handler)

    def register_callback(self, callback: ObjectCallback, frequency: float | None = None) -> int:
        """Call `callback(obj, dt)` every step, or at `frequency` Hz of simulated time.

        Returns an id for `sim.unregister_callback`. The callback goes away with the object.
        """
        return self._world.scheduler.add(callback, self, frequency)

    def remove(self) -> None:
        """Remove the object from the simulation. Its children are detached and stay put."""
        self._world.remove_body(self._handle)

    def __repr__(self) -> str:
        if self.is_removed:
            return f"<{type(self).__name__} {self.name!r} (removed)>"
        b, row = self._world.bodies, self._row
        p, body = b["pos"][row], int(b["body_id"][row])
        where = f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f})"
        ident = f"id={body}" if body >= 0 else "no PyBullet body yet"
        return f"<{type(self).__name__} {self.name!r} {ident} at {where}>"
