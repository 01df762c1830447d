"""`Backend`: one PyBullet client and everything fleetsim asks of it.

This package is the only code that imports `pybullet`. Every call passes the client id, so any
number of simulations can live in one process.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from pathlib import Path as FsPath

import numpy as np
import pybullet as pb
import pybullet_data
from numpy.typing import NDArray

from fleetsim.assets import check_urdf
from fleetsim.backend.gui import GuiBackend
from fleetsim.backend.joints import JointBackend
from fleetsim.backend.shapes import ShapeCache
from fleetsim.errors import BackendError, SimulationClosedError
from fleetsim.geometry.shapes import ShapeParams
from fleetsim.logs import LogLevelManager

FloatArray = NDArray[np.float64]
IdArray = NDArray[np.integer]

PYBULLET_DATA = FsPath(pybullet_data.getDataPath())
GUI_SETTLE_S = 0.3  # PyBullet's window thread prints its OpenGL details just after connect
FLOOR_URDF = str(PYBULLET_DATA / "plane.urdf")


class Backend:
    """A connected PyBullet client (DIRECT by default, GUI on request) with its shape cache."""

    def __init__(self, gui: bool = False) -> None:
        with LogLevelManager.quiet_native():
            client = pb.connect(pb.GUI if gui else pb.DIRECT)
            if gui and client >= 0:  # the window thread's start-up prints end meanwhile
                pb.getDebugVisualizerCamera(physicsClientId=client)
                time.sleep(GUI_SETTLE_S)
        if client < 0:
            mode = "GUI (is a display available?)" if gui else "DIRECT"
            raise BackendError(f"could not connect to PyBullet in {mode} mode")
        self._client: int | None = client
        self.gui = gui
        self._undrawn = 0  # depth of nested `undrawn()` blocks
        self.shapes = ShapeCache(client)
        self.joints = JointBackend(self)
        self.window = GuiBackend(self)

    @property
    def client(self) -> int:
        """The PyBullet client id; raises SimulationClosedError after `close()`."""
        self.ensure_open()
        assert self._client is not None
        return self._client

    def ensure_open(self) -> None:
        """Raise SimulationClosedError after `close()`."""
        if self._client is None:
            raise SimulationClosedError("the simulation was closed; create a new one")

    @property
    def is_open(self) -> bool:
        """Whether the PyBullet client is connected."""
        return self._client is not None and bool(pb.isConnected(physicsClientId=self._client))

    def close(self) -> None:
        """Disconnect. Safe to call twice."""
        if self._client is not None:
            if pb.isConnected(physicsClientId=self._client):
                with LogLevelManager.quiet_native():  # no GUI thread shutdown chatter
                    pb.disconnect(physicsClientId=self._client)
            self._client = None
            self.shapes.clear()

    def reset(self) -> None:
        """Empty the PyBullet world (bodies, shapes, constraints) and forget cached shapes."""
        pb.resetSimulation(physicsClientId=self.client)
        self.shapes.clear()

    def configure(self, timestep: float, gravity: Sequence[float]) -> None:
        """Set the physics timestep and gravity."""
        c = self.client
        pb.setTimeStep(timestep, physicsClientId=c)
        pb.setGravity(*gravity, physicsClientId=c)

    def set_rendering(self, enabled: bool) -> None:
        """Turn GUI rendering on or off (no effect in DIRECT mode)."""
        if self.gui:
            pb.configureDebugVisualizer(
                pb.COV_ENABLE_RENDERING, int(enabled), physicsClientId=self.client
            )

    @contextlib.contextmanager
    def undrawn(self) -> Iterator[None]:
        """GUI rendering off for the block: bodies made in it load many times faster (a GUI
        that draws loads each robot in ~80 ms). Blocks nest; drawing resumes when the
        outermost ends, so a step of a build does not turn it back on for the rest."""
        self._undrawn += 1
        if self._undrawn == 1:
            self.set_rendering(False)
        try:
            yield
        finally:
            self._undrawn -= 1
            if self._undrawn == 0 and self._client is not None:
                self.set_rendering(True)

    def load_floor(self) -> int:
        """Load PyBullet's plane.urdf at z = 0 and return its body id."""
        return self.load_urdf(FLOOR_URDF, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), fixed_base=True)

    def load_urdf(
        self, path: str, position: Sequence[float], orientation: Sequence[float], fixed_base: bool
    ) -> int:
        """Load a URDF with its link frame at (position, orientation); returns the body id.

        Visual shapes are cached by PyBullet across loads of the same file (fleets load fast).
        The file and the meshes it names are checked first (a missing or broken mesh is an
        error naming it, not a crash or "Cannot load URDF file").
        """
        if not FsPath(path).exists() and (PYBULLET_DATA / path).exists():
            path = str(PYBULLET_DATA / path)  # as PyBullet's own search path would find it
        if path.lower().endswith(".urdf"):
            check_urdf(path)
        try:
            with LogLevelManager.quiet_native():
                return int(
                    pb.loadURDF(
                        path,
                        position,
                        orientation,
                        useFixedBase=fixed_base,
                        flags=pb.URDF_ENABLE_CACHED_GRAPHICS_SHAPES,
                        physicsClientId=self.client,
                    )
                )
        except pb.error as exc:
            raise BackendError(
                f"PyBullet could not load {path}: {exc} (check the file's XML and the meshes "
                "and packages it names)"
            ) from exc

    def prepare_agent_body(self, body_id: int, mass: float | None, kinematic: bool) -> float:
        """Set the base mass (None keeps the URDF's); returns the mass.

        With physics on, a robot the controllers drive must not also fall under gravity, so its
        base is made kinematic (mass 0 in PyBullet) while the returned mass is kept for reference.
        """
        c = self.client
        if mass is not None:
            pb.changeDynamics(body_id, -1, mass=mass, physicsClientId=c)
        actual = float(pb.getDynamicsInfo(body_id, -1, physicsClientId=c)[0])
        if kinematic:
            pb.changeDynamics(body_id, -1, mass=0.0, physicsClientId=c)
        return actual

    def is_single_box(self, body_id: int) -> bool:
        """Whether a body's only collision geometry is one box not rotated in the base frame."""
        c = self.client
        if pb.getNumJoints(body_id, physicsClientId=c) != 0:
            return False
        shapes = pb.getCollisionShapeData(body_id, -1, physicsClientId=c)
        return (
            len(shapes) == 1
            and shapes[0][2] == pb.GEOM_BOX
            and np.allclose(shapes[0][6], (0, 0, 0, 1))
        )

    def is_rigid_primitives(self, body_id: int) -> bool:
        """Whether a body is built of boxes, spheres, cylinders and capsules only, on fixed or
        continuous joints (wheels turn on them): its shape does not change as it drives, unlike
        an arm's, a lift's or a mesh's."""
        c = self.client
        joints = pb.getNumJoints(body_id, physicsClientId=c)
        for j in range(joints):
            info = pb.getJointInfo(body_id, j, physicsClientId=c)
            continuous = info[2] == pb.JOINT_REVOLUTE and info[8] > info[9]  # no limits
            if info[2] != pb.JOINT_FIXED and not continuous:
                return False
        shapes = [
            s
            for link in range(-1, joints)
            for s in pb.getCollisionShapeData(body_id, link, physicsClientId=c)
        ]
        primitives = (pb.GEOM_BOX, pb.GEOM_SPHERE, pb.GEOM_CYLINDER, pb.GEOM_CAPSULE)
        # PyBullet loads a URDF cylinder as a convex hull it makes itself, a mesh with no file.
        return bool(shapes) and all(
            s[2] in primitives or (s[2] == pb.GEOM_MESH and s[4] == b"unknown_file") for s in shapes
        )

    def inertial_offset(self, body_id: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(position, orientation) of the base's inertial frame in its link frame.

        PyBullet's base pose calls use the inertial frame; URDFs are authored in the link frame.
        """
        info = pb.getDynamicsInfo(body_id, -1, physicsClientId=self.client)
        return tuple(info[3]), tuple(info[4])

    def create_body(
        self,
        collision: ShapeParams | None,
        visual: ShapeParams | None,
        mass: float,
        position: Sequence[float],
        orientation: Sequence[float],
    ) -> int:
        """Create a single-link body from cached shapes; returns its PyBullet id."""
        col = self.shapes.collision(collision) if collision is not None else -1
        vis = self.shapes.visual(visual) if visual is not None else -1
        body = pb.createMultiBody(
            baseMass=mass,
            baseCollisionShapeIndex=col,
            baseVisualShapeIndex=vis,
            basePosition=position,
            baseOrientation=orientation,
            physicsClientId=self.client,
        )
        if body < 0:
            raise BackendError("PyBullet could not create the body")
        return int(body)

    def create_mesh_body(
        self,
        vertices: FloatArray,
        triangles: NDArray[np.int64],
        position: Sequence[float],
        rgba: Sequence[float],
        concave: bool,
    ) -> int:
        """A static body (mass 0) of a mesh held in memory: vertices (V, 3) relative to
        `position`, triangles (T, 3). `concave`: the triangles collide as they are (static
        only); else their convex hull does. Drawn as the triangles."""
        points = np.asarray(vertices, dtype=np.float64).tolist()
        faces = np.asarray(triangles, dtype=np.int64).ravel().tolist()
        try:
            col = pb.createCollisionShape(
                pb.GEOM_MESH,
                vertices=points,
                **({"indices": faces} if concave else {}),
                physicsClientId=self.client,
            )
            vis = pb.createVisualShape(
                pb.GEOM_MESH,
                vertices=points,
                indices=faces,
                rgbaColor=list(rgba),
                physicsClientId=self.client,
            )
        except pb.error as e:
            raise BackendError(
                f"PyBullet could not make a mesh of {len(points):,} vertices and "
                f"{len(faces) // 3:,} triangles ({e}); use a box or a smaller mesh"
            ) from None
        body = pb.createMultiBody(
            0.0, col, vis, basePosition=list(position), physicsClientId=self.client
        )
        if body < 0:
            raise BackendError("PyBullet could not create the mesh body")
        return int(body)

    def create_boxes(
        self,
        half_extents: FloatArray,
        positions: FloatArray,
        orientations: FloatArray,
        rgba: Sequence[float],
    ) -> NDArray[np.int64]:
        """Bodies of mass 0 for K boxes (each array (K, 3) or (K, 4)); returns their ids (K,).

        One batched PyBullet call per distinct size and orientation (a site's blocks and walls):
        about 0.1 ms a body, where one call per body takes 0.2-0.6 ms as the world grows.
        """
        keys = np.round(np.hstack((half_extents, orientations)), 9)
        groups, inverse = np.unique(keys, axis=0, return_inverse=True)
        order = np.argsort(inverse.ravel(), kind="stable")
        bounds = np.searchsorted(inverse.ravel()[order], np.arange(len(groups) + 1))
        ids = np.full(len(positions), -1, dtype=np.int64)
        try:
            with self.undrawn():  # (a batch drawn as it is made takes seconds in the GUI)
                for g in range(len(groups)):
                    rows = order[bounds[g] : bounds[g + 1]]
                    half = tuple(float(v) for v in half_extents[rows[0]])
                    col = self.shapes.collision(ShapeParams("box", half_extents=half))
                    vis = self.shapes.visual(
                        ShapeParams("box", half_extents=half, rgba_color=tuple(rgba))
                    )
                    made = pb.createMultiBody(
                        baseMass=0.0,
                        baseCollisionShapeIndex=col,
                        baseVisualShapeIndex=vis,
                        basePosition=positions[rows[0]].tolist(),
                        baseOrientation=orientations[rows[0]].tolist(),
                        batchPositions=positions[rows].tolist(),
                        physicsClientId=self.client,
                    )
                    made = np.atleast_1d(np.asarray(made, dtype=np.int64))
                    if len(made) != len(rows) or (made < 0).any():
                        raise BackendError("PyBullet could not create the boxes")
                    ids[rows] = made
            # PyBullet's client learns only the first body of a batch; without this,
            # getBodyInfo and getNumBodies would not know the others.
            pb.syncBodyInfo(physicsClientId=self.client)
        except BaseException:
            for body in ids[ids >= 0].tolist():
                self.remove_body(body)
            raise
        return ids

    def remove_body(self, body_id: int) -> None:
        """Remove a PyBullet body."""
        pb.removeBody(body_id, physicsClientId=self.client)

    def has_body(self, body_id: int) -> bool:
        """Whether `body_id` is a body of this client."""
        if not 0 <= body_id < 2**31:
            return False
        try:
            pb.getBodyInfo(body_id, physicsClientId=self.client)
        except pb.error:
            return False
        return True

    def num_bodies(self) -> int:
        """How many bodies PyBullet holds."""
        return int(pb.getNumBodies(physicsClientId=self.client))

    def push_poses(
        self, body_ids: IdArray, positions: FloatArray, orientations: FloatArray
    ) -> None:
        """Write base poses: ids (N,), positions (N, 3), orientations (N, 4)."""
        reset = pb.resetBasePositionAndOrientation
        c = self.client
        for body, pos, orn in zip(
            body_ids.tolist(), positions.tolist(), orientations.tolist(), strict=True
        ):
            reset(body, pos, orn, physicsClientId=c)

    def read_link_pose(
        self, body_id: int, com_pos: Sequence[float], com_quat: Sequence[float]
    ) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """A body's link-frame pose, from PyBullet's inertial-frame pose and the offset."""
        c = self.client
        pos, orn = pb.getBasePositionAndOrientation(body_id, physicsClientId=c)
        inv_pos, inv_orn = pb.invertTransform(com_pos, com_quat)
        link_pos, link_orn = pb.multiplyTransforms(pos, orn, inv_pos, inv_orn)
        return tuple(link_pos), tuple(link_orn)

    def read_poses(self, body_ids: IdArray) -> tuple[FloatArray, FloatArray]:
        """Base poses of bodies: positions (N, 3), orientations (N, 4)."""
        get = pb.getBasePositionAndOrientation
        c = self.client
        n = len(body_ids)
        pos = np.empty((n, 3))
        orn = np.empty((n, 4))
        for i, body in enumerate(body_ids.tolist()):
            pos[i], orn[i] = get(body, physicsClientId=c)
        return pos, orn

    def local_aabb(self, body_id: int) -> tuple[FloatArray, FloatArray]:
        """(min, max) around all links of a body, in its link (URDF) frame.

        Measured by placing the link frame at the origin for a moment, then putting it back.
        """
        c = self.client
        pos, orn = pb.getBasePositionAndOrientation(body_id, physicsClientId=c)
        com_pos, com_orn = self.inertial_offset(body_id)
        pb.resetBasePositionAndOrientation(body_id, com_pos, com_orn, physicsClientId=c)
        try:
            boxes = [
                pb.getAABB(body_id, link, physicsClientId=c)
                for link in range(-1, pb.getNumJoints(body_id, physicsClientId=c))
            ]
        finally:
            pb.resetBasePositionAndOrientation(body_id, pos, orn, physicsClientId=c)
        lo = np.min([b[0] for b in boxes], axis=0)
        hi = np.max([b[1] for b in boxes], axis=0)
        return lo, hi

    def closest_pairs(self, ids_a: IdArray, ids_b: IdArray, margin: float) -> np.ndarray:
        """Per pair, whether the bodies are within `margin` metres (touching or penetrating)."""
        query = pb.getClosestPoints
        c = self.client
        return np.array(
            [
                bool(query(a, b, margin, physicsClientId=c))
                for a, b in zip(ids_a.tolist(), ids_b.tolist(), strict=True)
            ],
            dtype=bool,
        )

    def contact_pairs(self, ids_a: IdArray, ids_b: IdArray) -> np.ndarray:
        """Per pair, whether the last physics step found contact points between the bodies."""
        query = pb.getContactPoints
        c = self.client
        return np.array(
            [
                bool(query(a, b, physicsClientId=c))
                for a, b in zip(ids_a.tolist(), ids_b.tolist(), strict=True)
            ],
            dtype=bool,
        )

    def base_color(self, body_id: int) -> tuple[float, ...]:
        """RGBA of the body's first visual shape (white if it has none)."""
        shapes = pb.getVisualShapeData(body_id, physicsClientId=self.client)
        return tuple(shapes[0][7]) if shapes else (1.0, 1.0, 1.0, 1.0)

    def set_color(self, body_id: int, rgba: Sequence[float]) -> None:
        """Colour a body's visual shapes (RGBA, 0-1)."""
        pb.changeVisualShape(body_id, -1, rgbaColor=list(rgba), physicsClientId=self.client)

    def step_physics(self) -> None:
        """One PyBullet `stepSimulation`."""
        pb.stepSimulation(physicsClientId=self.client)

    def add_fixed_constraint(
        self, parent_id: int, child_id: int, rel_pos: Sequence[float], rel_quat: Sequence[float]
    ) -> int:
        """Hold `child_id` at `rel_pos`/`rel_quat` in the parent's base frame; returns the id."""
        return int(
            pb.createConstraint(
                parent_id,
                -1,
                child_id,
                -1,
                pb.JOINT_FIXED,
                (0, 0, 0),
                rel_pos,
                (0, 0, 0),
                parentFrameOrientation=rel_quat,
                physicsClientId=self.client,
            )
        )

    def remove_constraint(self, constraint_id: int) -> None:
        """Remove a PyBullet constraint."""
        pb.removeConstraint(constraint_id, physicsClientId=self.client)
