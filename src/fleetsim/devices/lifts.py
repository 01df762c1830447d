"""A building's lifts as devices: a cabin that moves between floors, with doors and a queue.

A lift serves one session at a time, as an Open-RMF lift does: a requester (a robot of the
fleet manager, an outside system, a script) asks for the lift at a level (`request`); when
its turn comes (the queue's order is the lift's policy: `fifo`, first come first served, or
`nearest`, the waiting request nearest the cabin first) the cabin closes its doors, travels
at its speed, and opens its doors there. The session may then send the lift to another level
(`request` again, with robots aboard) and ends with `release`, when the lift serves the next.
Robots aboard (`board`, at most `capacity`) ride with the cabin: their height follows it.
Every change (doors, arrival, session) is a "lift_changed" event (lift, state, time); `kpis()`
gives each lift's trips, the time it moved and was held, and how long requests waited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fleetsim.devices.doors import DoorMode
from fleetsim.devices.lift_ride import LiftRides
from fleetsim.errors import ConfigError, named

if TYPE_CHECKING:
    from fleetsim.devices.host import DeviceHost
    from fleetsim.site import Site

SPEED_MPS = 1.0  # cabin speed
DOOR_S = 2.0  # the doors open (or close) in this
POLICIES = ("fifo", "nearest")


@dataclass
class _Call:
    requester: str
    level: str
    since: float


@dataclass
class LiftDevice:
    """One lift: where it serves, its cabin's height and doors, the session it serves, the
    requests waiting, who is aboard, and its totals."""

    name: str
    levels: list[str]  # served, lowest first
    elevations: dict[str, float]
    capacity: int
    speed: float = SPEED_MPS
    door_s: float = DOOR_S
    z: float = 0.0
    level: str = ""  # where the cabin is, or last was
    door: DoorMode = DoorMode.CLOSED
    opened: float = 0.0
    session: str | None = None
    target: str | None = None  # where the session wants the cabin
    queue: list[_Call] = field(default_factory=list)
    aboard: dict[str, Any] = field(default_factory=dict)  # requester -> robot (SimObject)
    guests: list[str] = field(default_factory=list)  # riding in the session, with its holder
    trips: int = 0
    moving_s: float = 0.0
    held_s: float = 0.0  # in a session
    waited_s: list[float] = field(default_factory=list)  # request -> its session began
    in_service: bool = True  # out of service: nothing moves, requests wait (a fault)

    def ready(self, level: str, requester: str) -> bool:
        """Whether the cabin is at `level` with its doors open for `requester`'s session."""
        return (
            (self.session == requester or requester in self.guests)
            and self.level == level
            and abs(self.z - self.elevations[level]) < 1e-9
            and self.door is DoorMode.OPEN
        )

    def state(self) -> dict[str, Any]:
        """Name, level, height, door and motion, the session's requester, who is aboard and
        whether it is in service."""
        return {
            "name": self.name,
            "level": self.level,
            "z": round(self.z, 3),
            "door": self.door.value,
            "session": self.session,
            "guests": list(self.guests),
            "target": self.target,
            "queue": [c.requester for c in self.queue],
            "aboard": sorted(self.aboard),
            "moving": self.moving,
            "in_service": self.in_service,
        }

    @property
    def moving(self) -> bool:
        """Whether the cabin is moving."""
        return self.target is not None and abs(self.z - self.elevations[self.target]) > 1e-9


class Lifts:
    """The lifts of a simulation's site (`sim.lifts`)."""

    def __init__(
        self, sim: DeviceHost, site: Site, policy: str = "fifo", capacity: int | None = None
    ) -> None:
        if policy not in POLICIES:
            raise ConfigError(f"lift policy '{policy}': use one of {', '.join(POLICIES)}")
        self.sim, self.policy = sim, policy
        self.lifts: dict[str, LiftDevice] = {}
        served_specs = []
        for lift in site.lifts:
            if not lift.levels:
                continue  # serves no level: nothing to do (the loader said so)
            served = sorted(lift.levels, key=lambda name: (site.elevation(name), name))
            spots = capacity if capacity is not None else max(1, int(lift.width * lift.depth // 2))
            device = LiftDevice(lift.name, served, {n: site.elevation(n) for n in served}, spots)
            start = lift.initial_level if lift.initial_level in served else served[0]
            device.level, device.z = start, device.elevations[start]
            self.lifts[lift.name] = device
            served_specs.append(lift)
        self.rides = LiftRides(self, served_specs)  # the one way robots ride them
        self._callback = sim.register_callback(lambda *_: self.step(), owner=self)

    def __len__(self) -> int:
        return len(self.lifts)

    def __getitem__(self, name: str) -> LiftDevice:
        return named(self.lifts, name, "lift")

    # -- commands ---------------------------------------------------------------------------

    def request(self, name: str, requester: str, level: str) -> LiftDevice:
        """`requester` wants the lift at `level`: queued, or (its session) sent there."""
        lift = self[name]
        if level not in lift.elevations:
            raise ConfigError(
                f"lift {name} does not serve level '{level}' (it serves {', '.join(lift.levels)})"
            )
        if lift.session == requester:
            if lift.target != level:
                lift.target = level
                self._changed(lift)
            return lift
        for call in lift.queue:
            if call.requester == requester:
                call.level = level
                return lift
        lift.queue.append(_Call(requester, level, self.sim.sim_time))
        return lift

    def release(self, name: str, requester: str) -> LiftDevice:
        """`requester` is done with the lift (its session ends, or its request is withdrawn).
        A holder that leaves guests behind hands the session to the first of them."""
        lift = self[name]
        lift.queue = [c for c in lift.queue if c.requester != requester]
        if requester in lift.guests:
            lift.guests.remove(requester)
            lift.aboard.pop(requester, None)
            self._changed(lift)
        elif lift.session == requester:
            lift.aboard.pop(requester, None)
            if lift.guests:
                lift.session = lift.guests.pop(0)
            else:
                lift.session, lift.target = None, None
            self._changed(lift)
        return lift

    def admit(self, name: str, guest: str) -> bool:
        """`guest`, waiting in the queue at the level where the cabin stands for the session,
        rides in that session (as a robot going the same way does): False when the cabin has
        no session there or no room (its capacity counts the holder and every guest)."""
        lift = self[name]
        call = next((c for c in lift.queue if c.requester == guest), None)
        if lift.session is None or call is None or call.level != lift.level:
            return False
        if 1 + len(lift.guests) >= lift.capacity:
            return False
        lift.queue.remove(call)
        lift.guests.append(guest)
        lift.waited_s.append(self.sim.sim_time - call.since)
        self._changed(lift)
        return True

    def board(self, name: str, requester: str, robot: Any) -> bool:
        """A robot of `requester`'s session rides the cabin from now on; False when the
        cabin is full."""
        lift = self[name]
        if lift.session != requester and requester not in lift.guests:
            raise ConfigError(f"{requester} has no session with lift {name}")
        if requester not in lift.aboard and len(lift.aboard) >= lift.capacity:
            return False
        lift.aboard[requester] = robot
        return True

    def alight(self, name: str, requester: str) -> None:
        """`requester` leaves the cabin."""
        self[name].aboard.pop(requester, None)

    def set_in_service(self, name: str, in_service: bool) -> None:
        """Take lift `name` out of service (its cabin and doors stop as they are, requests
        wait) or put it back."""
        lift = self[name]
        if lift.in_service != in_service:
            lift.in_service = bool(in_service)
            self._changed(lift)

    def states(self) -> list[dict[str, Any]]:
        """Every lift's `state()`."""
        return [lift.state() for lift in self.lifts.values()]

    # -- the step ---------------------------------------------------------------------------

    def step(self) -> None:
        """Move the lifts one step: serve the queue, move cabins and doors, carry riders."""
        dt = self.sim.params.timestep
        for lift in self.lifts.values():
            if not lift.in_service:
                continue
            if lift.session is None and lift.queue:
                self._next_session(lift)
            if lift.session is not None:
                lift.held_s += dt
            self._move(lift, dt)
        self.rides.step()

    def _next_session(self, lift: LiftDevice) -> None:
        if self.policy == "nearest":
            call = min(lift.queue, key=lambda c: (abs(lift.elevations[c.level] - lift.z), c.since))
        else:
            call = lift.queue[0]
        lift.queue.remove(call)
        lift.session, lift.target = call.requester, call.level
        lift.waited_s.append(self.sim.sim_time - call.since)
        self._changed(lift)

    def _move(self, lift: LiftDevice, dt: float) -> None:
        if lift.target is None:  # no session: doors closed, cabin where it is
            self._doors(lift, False, dt)
            return
        goal = lift.elevations[lift.target]
        if abs(lift.z - goal) > 1e-9:
            if lift.door is not DoorMode.CLOSED:
                self._doors(lift, False, dt)  # close before moving
                return
            step = lift.speed * dt
            lift.z = (
                goal
                if abs(goal - lift.z) <= step + 1e-9
                else lift.z + step * (1 if goal > lift.z else -1)
            )
            lift.moving_s += dt
            self._carry(lift)
            if lift.z == goal:  # arrived
                lift.level = lift.target
                lift.trips += 1
                self._changed(lift)
            return
        self._doors(lift, True, dt)

    def _doors(self, lift: LiftDevice, want_open: bool, dt: float) -> None:
        rate = dt / max(lift.door_s, 1e-9)
        before = lift.door
        if want_open and lift.door is not DoorMode.OPEN:
            lift.opened = min(1.0, lift.opened + rate)
            lift.door = DoorMode.OPEN if lift.opened >= 1.0 else DoorMode.OPENING
        elif not want_open and lift.door is not DoorMode.CLOSED:
            lift.opened = max(0.0, lift.opened - rate)
            lift.door = DoorMode.CLOSED if lift.opened <= 0.0 else DoorMode.CLOSING
        if lift.door is not before:
            self._changed(lift)

    def _carry(self, lift: LiftDevice) -> None:
        """Robots aboard ride at the cabin's height."""
        for robot in lift.aboard.values():
            x, y, _ = robot.get_pose().position
            robot.set_pose_raw((x, y, lift.z))

    def _changed(self, lift: LiftDevice) -> None:
        self.sim.events.emit("lift_changed", lift.name, lift.state(), round(self.sim.sim_time, 9))

    def kpis(self) -> dict[str, Any]:
        """Each lift's trips, moving and held time, requests served and their waits."""
        now = max(self.sim.sim_time, 1e-9)
        per = {
            lift.name: {
                "trips": lift.trips,
                "moving_s": round(lift.moving_s, 3),
                "held_s": round(lift.held_s, 3),
                "utilisation": round(lift.held_s / now, 4),
                "sessions": len(lift.waited_s),
                "wait_s_mean": round(sum(lift.waited_s) / len(lift.waited_s), 3)
                if lift.waited_s
                else 0.0,
            }
            for lift in self.lifts.values()
        }
        trips = sum(p["trips"] for p in per.values())
        return {
            "lift_trips": trips,
            "lift_sessions": sum(p["sessions"] for p in per.values()),
            "lifts": per,
        }
