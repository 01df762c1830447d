"""`MultiRobotSimulationCore`: owns one PyBullet client, the body arrays and the step loop."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path as FsPath
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fleetsim.actions import ActionSystem
from fleetsim.backend import Backend
from fleetsim.collision import CollisionSystem
from fleetsim.core import phases
from fleetsim.core.camera import frame_fleet
from fleetsim.core.collision_queries import CollisionQueries
from fleetsim.core.frontends import FRONTENDS, Monitor, Recorder, Viewer
from fleetsim.core.pacer import Pacer
from fleetsim.core.params import SimulationParams
from fleetsim.core.people import People
from fleetsim.core.profiler import StepProfiler
from fleetsim.devices import Doors, Lifts
from fleetsim.errors import ConfigError
from fleetsim.events import NAMES, EventBus, FirstError, Handler
from fleetsim.geometry import quat
from fleetsim.objects import SimObject, World
from fleetsim.scheduling import Callback, CallbackScheduler
from fleetsim.sensors import Lidars, SafetyFields
from fleetsim.site import Site
from fleetsim.state import CollisionMode

log = logging.getLogger(__name__)

EVENTS = NAMES  # every event a simulation emits (`fleetsim.events.CATALOGUE`)

Bodies = Sequence[SimObject] | NDArray[np.integer]
FrameCallback = Callable[[Any, float], Any]


class MultiRobotSimulationCore(CollisionQueries):
    """A simulation: create it, add bodies, then `step_once()` or `run_simulation()`.

    Headless (PyBullet DIRECT) unless `params.gui`. Use it as a context manager, or call `close()`,
    to release the PyBullet client.

    Example:
        >>> with MultiRobotSimulationCore(SimulationParams(target_rtf=0)) as sim:
        ...     params = SimObjectSpawnParams(visual_shape=ShapeParams())
        ...     box = SimObject.from_params(params, sim_core=sim)
        ...     sim.run_simulation(duration=1.0)
    """

    def __init__(self, params: SimulationParams | None = None) -> None:
        if params is not None and not isinstance(params, SimulationParams):
            raise ConfigError(
                f"MultiRobotSimulationCore needs SimulationParams, got {type(params).__name__}"
            )
        # Our own copy: only its live fields may change (see SimulationParams.in_use).
        self.params = (params or SimulationParams()).in_use()
        self.events = EventBus(EVENTS)
        self._scheduler = CallbackScheduler()
        self._backend = Backend(gui=self.params.gui)
        self._world = World(
            self._backend,
            self.events,
            self._scheduler,
            physics=self.params.physics,
            eager_sync=self.params.eager_sync,
            lazy_bodies=self.params.lazy_bodies,
        )
        self._profiler = StepProfiler()
        self.actions = ActionSystem(self.events)
        self._world.actions = self.actions
        p = self.params
        self.collisions = CollisionSystem(
            self._world.bodies,
            self._backend,
            self._world.sync_rows,
            narrow_phase=p.collision_narrowphase,
            margin=p.collision_margin,
            footprints=p.collision_footprints,
            ignore_static=p.ignore_static_collision,
            cell_size_mode=p.spatial_hash_cell_size_mode,
            cell_size=p.spatial_hash_cell_size,
        )
        self._world.contacts.color_change = p.enable_collision_color_change
        self._world.intended = self.collisions.intended
        self._next_collision_check = 0.0
        self.doors: Doors | None = None  # the site's doors, when it has any
        self._people: People | None = None  # (made on first use of `people`)
        self.behaviors: Any = None  # (a `fleetsim.behavior.Behaviors`, which sets it)
        self.lifts: Lifts | None = None  # the site's lifts, when it has any
        self.gui: Viewer | None = self._make_viewer() if p.gui else None
        self.monitor: Monitor | None = None
        self._paused = False
        self._resume_event = threading.Event()
        self._resume_event.set()
        self._stop_requested = False
        self.step_count = 0
        self.static_body_ids: set[int] = set()
        self.floor_id: int | None = None
        self.rng = np.random.default_rng(self.params.seed)
        self._set_up_world()

    @classmethod
    def from_dict(cls, config: dict[str, Any]) -> MultiRobotSimulationCore:
        """From a mapping of `SimulationParams` fields."""
        return cls(SimulationParams.from_dict(config))

    @classmethod
    def from_yaml(cls, path: str | FsPath) -> MultiRobotSimulationCore:
        """From a YAML file (see `SimulationParams.from_config`)."""
        return cls(SimulationParams.from_config(path))

    def _set_up_world(self) -> None:
        self._backend.configure(self.params.timestep, self.params.gravity)
        self.floor_id = self._backend.load_floor() if self.params.enable_floor else None

    # -- identity -----------------------------------------------------------------------------

    @property
    def client(self) -> int:
        """The PyBullet client id, for direct PyBullet calls (`physicsClientId=sim.client`)."""
        return self._backend.client

    @property
    def world(self) -> World:
        """The shared state bodies act on (tables, backend); used by `SimObject` factories."""
        return self._world

    @property
    def sim_time(self) -> float:
        """Simulated seconds since start or `reset()`."""
        return self.step_count * self.params.timestep

    @property
    def sim_objects(self) -> list[SimObject]:
        """All live objects, in creation order."""
        return list(self._world.objects.values())

    def get_object(self, object_id: int) -> SimObject | None:
        """The object whose PyBullet body id is `object_id`, or None."""
        handle = self._world.handle_by_body_id.get(object_id)
        return None if handle is None else self._world.objects[handle]

    # -- stepping -----------------------------------------------------------------------------

    def step_once(self, return_profiling: bool = False) -> dict[str, float] | None:
        """Advance the simulation by one `timestep`.

        Returns this step's per-phase times in ms when `return_profiling` is True. If user code
        (a callback, an event handler, an action) raises, the step still completes (every
        phase runs, the clock advances) and the first error is raised at the end, so the next
        step starts from a consistent state. A raising action ends FAILED.
        """
        self._backend.ensure_open()
        if self._world.in_step:
            raise ConfigError(
                "step_once() was called from inside a step (a callback, handler or action); "
                "the step is already running; use sim.stop() to end run_simulation instead"
            )
        dt, world, prof = self.params.timestep, self._world, self._profiler
        world.time = self.sim_time
        errors = FirstError()
        prof.begin()
        with world.stepping():
            with prof.section("phase1_update"):
                with errors:
                    self.events.emit("pre_step", self, dt)
                with prof.section("agent_update"), errors:
                    phases.update_agents(world, dt)
                with prof.section("callbacks"), errors:
                    phases.run_callbacks(world, self.sim_time, dt)
                # Last, so every pose written in this step carries attached children.
                phases.follow_attachments(world)
            with prof.section("phase2_pose_flush"):
                phases.flush_poses(world)
        if self.params.physics:
            with prof.section("step_simulation"):
                phases.step_physics(world)
        with prof.section("phase3_aabb_grid_flush"):
            phases.refresh_aabbs(world)
        with prof.section("collision_check"):
            if self._collision_check_due():
                with errors:
                    self._run_collision_check()
        if self._people is not None:
            with prof.section("people"), errors:
                self._people.step(dt)
        self.step_count += 1
        if world.lidars:
            with prof.section("sensors"), errors:
                self._sense()
        with errors:
            self.events.emit("post_step", self, dt)
        if self.gui is not None:
            self.gui.frame()  # keys, and poses for the next drawn frame (at most 60 per second)
        stats = prof.end()
        errors.raise_()
        return dict(stats) if return_profiling else None

    @property
    def people(self) -> People:
        """The simulation's pedestrians (`fleetsim.core.people.People`), made on first use."""
        if self._people is None:
            self._people = People(self)
        return self._people

    # -- sensors ------------------------------------------------------------------------------

    def _sense(self) -> None:
        """The lidars due now (the step's end) scan; the safety fields they read change."""
        people = self._people.ray_shapes() if self._people is not None else None
        scanned, changes = phases.sense(
            self._world, self.sim_time, self.rng, self._profiler, people
        )
        if scanned:
            self.events.emit("lidar_scanned", self, scanned)
        for obj, state in changes:
            self.events.emit("safety_field_changed", obj, state)

    @property
    def safety(self) -> SafetyFields:
        """The robots guarded by safety fields (`agent.set_safety_fields(...)`): their states
        and totals (`safety.totals(sim.sim_time)`)."""
        return self._world.safety

    @property
    def lidars(self) -> Lidars:
        """Every lidar in this simulation, by model (`lidars.groups`: the fleet's scans as
        arrays); add one with `obj.add_lidar(...)`."""
        return self._world.lidars

    def get_profiling_stats(self) -> dict[str, float]:
        """Mean per-phase milliseconds over the last 100 steps (keys: `PROFILE_KEYS`)."""
        return self._profiler.mean()

    def run_simulation(
        self,
        duration: float | FrameCallback | None = None,
        update_callback: FrameCallback | None = None,
        final_callback: FrameCallback | None = None,
    ) -> None:
        """Step at `params.target_rtf` x real time for `duration` simulated seconds.

        `duration` defaults to `params.duration`; when both are None, runs until `stop()`. Can be
        called again after it returns; simulated time carries on.

        `update_callback(sim, dt)` runs once per frame (after the frame's steps; `dt` is the
        simulated time they covered) and `final_callback(sim, dt)` once when the run ends (also
        after `stop()` or an error; `dt` is the whole run). As in the seed's
        `run_simulation(update_callback, final_callback)`, the callbacks may also be passed
        first, positionally.
        """
        if callable(duration):  # the seed's positional form
            duration, update_callback, final_callback = None, duration, update_callback
        for name, cb in (("update_callback", update_callback), ("final_callback", final_callback)):
            if cb is not None and not callable(cb):
                raise ConfigError(f"{name} must be callable as {name}(sim, dt), got {cb!r:.80}")
        duration = self.params.duration if duration is None else duration
        if duration is not None and not (isinstance(duration, int | float) and duration > 0):
            raise ConfigError(f"duration must be > 0 simulated seconds, got {duration!r:.80}")
        if self._paused:
            log.warning(
                "run_simulation() on a paused simulation waits for resume() (or SPACE in the GUI)"
            )
        started = self.sim_time
        try:
            self._run_frames(duration, update_callback)
        finally:
            if final_callback is not None:
                final_callback(self, self.sim_time - started)

    def _run_frames(self, duration: float | None, update_callback: FrameCallback | None) -> None:
        dt = self.params.timestep
        end_step = None if duration is None else self.step_count + max(1, round(duration / dt))
        if self.gui is not None and not self.gui.camera_set:
            self.gui.setup_camera()
        if self.params.monitor and self.monitor is None and FRONTENDS.monitor is not None:
            self.monitor = FRONTENDS.monitor(self).start()
        pacer = Pacer(dt, self.params.target_rtf, self.params.max_steps_per_frame)
        pacer.start(self.sim_time)
        self._stop_requested = False
        last_step_s = 0.0
        frame_s = 1.0 / self.params.gui_min_fps

        def running() -> bool:
            return not self._stop_requested and (end_step is None or self.step_count < end_step)

        while running():
            if self._paused:
                self._resume_event.wait(timeout=frame_s)
                if self.gui is not None:
                    self.gui.frame()  # SPACE resumes
                if not self.is_paused:  # resumed: re-base so there is no catch-up burst
                    pacer.start(self.sim_time)
                continue
            steps, sleep_s = pacer.plan(self.sim_time, last_step_s)
            if sleep_s > 0:
                # In slices of one GUI frame, so pause() and stop() take effect promptly.
                time.sleep(min(sleep_s, frame_s))
                continue
            frame_start = self.sim_time
            for _ in range(steps):
                if self._paused or not running():
                    break
                t0 = time.perf_counter()
                self.step_once()
                last_step_s = time.perf_counter() - t0
            if update_callback is not None and self.sim_time > frame_start:
                update_callback(self, self.sim_time - frame_start)
            if self.params.gui and not self._backend.is_open:
                log.info("GUI window closed; stopping")
                break

    def stop(self) -> None:
        """Make `run_simulation` return after the current step (callable from callbacks)."""
        self._stop_requested = True
        self._resume_event.set()

    def pause(self) -> None:
        """Pause `run_simulation` (it blocks without using CPU). `step_once` still steps."""
        if not self._paused:
            self._paused = True
            self._resume_event.clear()
            self.events.emit("paused", self)

    def resume(self) -> None:
        """Resume after `pause()`. Simulated time continues with no catch-up burst."""
        if self._paused:
            self._paused = False
            self._resume_event.set()
            self.events.emit("resumed", self)

    @property
    def is_paused(self) -> bool:
        """Whether `run_simulation` is paused."""
        return self._paused

    # -- callbacks and events -----------------------------------------------------------------

    def register_callback(
        self, callback: Callback, frequency: float | None = None, owner: object = None
    ) -> int:
        """Call `callback(sim, dt)` every step, or at `frequency` Hz of simulated time.

        `dt` is the simulated time since the callback last ran. Returns an id for
        `unregister_callback`. Callbacks stay registered through `reset()`, except those with
        an `owner` (a part of the world, such as the site's doors), which go with the world.
        """
        return self._scheduler.add(callback, self if owner is None else owner, frequency)

    def unregister_callback(self, callback_id: int) -> None:
        """Stop calling the callback `register_callback` returned this id for."""
        self._scheduler.remove(callback_id)

    def on(self, event: str, handler: Handler) -> Handler:
        """Subscribe to an event (see `EVENTS`); returns the handler."""
        return self.events.on(event, handler)

    # -- bodies -------------------------------------------------------------------------------

    def register_static_body(self, body_id: int) -> SimObject:
        """Track a body you loaded with PyBullet (`physicsClientId=sim.client`) as static structure.

        It joins the body arrays with `CollisionMode.STATIC`; returns its `SimObject`.
        """
        existing = self.get_object(body_id)
        if existing is not None:
            existing.set_collision_mode(CollisionMode.STATIC)
            self.static_body_ids.add(body_id)
            return existing
        if not self._backend.has_body(body_id):
            raise ConfigError(
                f"no PyBullet body {body_id} in this simulation (client {self.client})"
            )
        obj: SimObject = self._world.adopt_body(
            body_id,
            lambda h: SimObject(self._world, h, f"static_{body_id}", {}),
            collision_mode=int(CollisionMode.STATIC),
        )
        self.static_body_ids.add(body_id)
        return obj

    # -- site ---------------------------------------------------------------------------------

    @property
    def site(self) -> Site | None:
        """The site robots route on (`GoTo`, `agent.go_to`), or None."""
        return self._world.site

    def set_site(self, site: Site) -> list[SimObject]:
        """Use `site` for routing and add its obstacles (walls, blocked cells) as static bodies;
        returns them. A simulation has one site; `reset()` removes it with everything else."""
        if not isinstance(site, Site):
            raise ConfigError(f"set_site needs a fleetsim.site.Site, got {site!r:.80}")
        if self._world.site is not None:
            raise ConfigError("this simulation already has a site; reset() it or make another")
        o = site.obstacles
        with self._backend.undrawn():
            bodies = SimObject.static_boxes(o.centres, o.half_extents, o.yaws, sim_core=self)
        self._world.site = site
        if site.doors:
            self.doors = self._world.doors = Doors(self, site)
            bodies += [d.body for d in self.doors.doors.values()]
        if any(lift.levels for lift in site.lifts):
            self.lifts = Lifts(self, site)
        return bodies

    def handles_of(self, objects: Bodies) -> NDArray[np.int64]:
        """Handles of objects, shape (N,): compute once, then pass to `set_poses`/`get_poses`.

        `objects` is a sequence of this simulation's `SimObject`s, or a 1-D integer NumPy array
        of handles (from `handles_of`). Anything else (PyBullet ids in a list, a bool mask,
        floats, 2-D arrays, objects of another simulation) is a `ConfigError`.
        """
        if isinstance(objects, np.ndarray):
            if objects.dtype.kind not in "iu" or objects.ndim != 1:
                raise ConfigError(
                    "handle arrays must be 1-D integer arrays from sim.handles_of(objects), "
                    f"got a {objects.ndim}-D {objects.dtype} array"
                )
            return objects.astype(np.int64, copy=False)  # live handles: checked by rows()
        if not isinstance(objects, list | tuple):
            raise ConfigError(
                f"expected a list of SimObjects or an array of handles, got {objects!r:.80}"
            )
        for obj in objects:
            if not isinstance(obj, SimObject):
                raise ConfigError(
                    f"expected SimObjects (or an array from sim.handles_of), got {obj!r:.80}; "
                    "PyBullet body ids are not handles: use sim.get_object(body_id)"
                )
            if obj.world is not self._world:
                raise ConfigError(f"{obj.name} belongs to another simulation")
        return np.fromiter((o.handle for o in objects), dtype=np.int64, count=len(objects))

    def set_poses(
        self, objects: Bodies, positions: ArrayLike, orientations: ArrayLike | None = None
    ) -> None:
        """Set many poses at once: positions (N, 3) metres, orientations (N, 4) xyzw or None.

        `objects` is a sequence of `SimObject` or an array of handles (`handles_of`). Same rules
        as `SimObject.set_pose`: buffered inside a step, immediate outside.
        """
        handles = self.handles_of(objects)
        pos = _checked(positions, (len(handles), 3), "positions")
        orn = None
        if orientations is not None:
            orn = quat.normalize(_checked(orientations, (len(handles), 4), "orientations"))
        self._world.write_poses(handles, pos, orn)

    def get_poses(self, objects: Bodies) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Current poses: positions (N, 3) and orientations (N, 4), as copies."""
        rows = self._world.bodies.rows(self.handles_of(objects))
        return self._world.bodies["pos"][rows], self._world.bodies["quat"][rows]

    def sync(self) -> int:
        """Push every pending pose to PyBullet so raw PyBullet calls see current poses.

        Only needed with lazy pose sync; returns how many bodies were pushed.
        """
        return self._world.sync()

    # -- viewing ------------------------------------------------------------------------------

    def setup_camera(self, mode: str | None = None, view: str | None = None, **manual: Any) -> Any:
        """Point the GUI camera: "auto" frames every body ("top_down" or "perspective" view);
        "manual" takes distance, yaw, pitch (degrees) and target. Defaults: `params.camera_*`."""
        return self._gui_controls().setup_camera(mode, view, **manual)

    def configure_visualizer(self, **switches: bool) -> None:
        """GUI switches: shadows, gui_panels, visual_shapes, collision_shapes, transparency."""
        self._gui_controls().configure_visualizer(**switches)

    def capture_image(self, width: int = 640, height: int = 480) -> NDArray[np.uint8]:
        """An RGB image (height, width, 3): the GUI's view, or headless an auto-framed one."""
        self.sync()
        if self.gui is not None:
            return self._backend.window.capture(width, height)
        distance, yaw, pitch, target = frame_fleet(self, self.params.camera_view)
        return self._backend.window.render(width, height, distance, yaw, pitch, target)

    def _make_viewer(self) -> Viewer:
        if FRONTENDS.viewer is None:
            raise ConfigError("no GUI controls provided (fleetsim.core.frontends.provide)")
        return FRONTENDS.viewer(self)

    def _gui_controls(self) -> Viewer:
        if self.gui is None:
            raise ConfigError("this needs the GUI: create the simulation with gui=True")
        return self.gui

    # -- lifetime -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Empty the world and start again at time 0 with the same parameters.

        All bodies are removed (their handles become invalid), the floor is reloaded when
        `enable_floor`, and the random generator is re-seeded. Simulation-level callbacks and
        event handlers stay registered.
        """
        self._backend.reset()
        self._world.clear()
        self.actions.reset()
        self.collisions.reset()
        self._next_collision_check = 0.0
        self._scheduler.keep_owner(self)
        self._scheduler.rewind(0.0)
        self.static_body_ids.clear()
        self._world.site = None
        self.doors = self._world.doors = None
        self._people = self.behaviors = None
        self.lifts = None
        self.step_count = 0
        self._world.time = 0.0
        self.rng = np.random.default_rng(self.params.seed)
        self._profiler.clear()
        self._set_up_world()
        self.events.emit("reset", self)

    def record(
        self,
        path: str | FsPath | None,
        rate: float = 10.0,
        metadata: dict[str, str] | None = None,
        out: Any = None,
    ) -> Recorder:
        """Record from now on to an MCAP file that opens in Foxglove (`rate` frames per
        simulated second), until the returned recorder's `close()` or this simulation's: the
        same as `fleetsim.recording.record(self, ...)`, which it calls. Needs `pip install
        "fleetsim[record]"`."""
        if FRONTENDS.recorder is None:
            raise ConfigError("no recorder provided (fleetsim.core.frontends.provide)")
        return FRONTENDS.recorder(self, path, rate, metadata, out)

    def close(self) -> None:
        """Disconnect from PyBullet, after the `closing` event (recorders and live views close
        on it) and stopping the monitor. Safe to call twice."""
        self.stop()
        if self._backend.is_open:
            try:
                self.events.emit("closing", self)
            except Exception as exc:  # the simulation still closes (a recording may be lost)
                log.error("while closing: %s", exc)
        if self.monitor is not None:
            self.monitor.stop()
            self.monitor = None
        self._backend.close()

    @property
    def is_closed(self) -> bool:
        """Whether `close()` has released the PyBullet client."""
        return not self._backend.is_open

    def __enter__(self) -> MultiRobotSimulationCore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.is_closed else f"client={self.client}"
        bodies = len(self._world.objects)
        return f"<MultiRobotSimulationCore {state} bodies={bodies} t={self.sim_time:.3f}s>"


def _checked(values: ArrayLike, shape: tuple[int, int], name: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != shape:
        raise ConfigError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{name} must be finite (found NaN or inf)")
    if name == "orientations" and np.any(np.linalg.norm(arr, axis=1) < 1e-12):
        raise ConfigError("orientations must be non-zero quaternions (x, y, z, w)")
    return arr
