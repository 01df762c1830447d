"""A lift ride, one way for every driver: call, wait, board, ride, leave, let go.

The fleet manager's traffic control, VDA 5050 vehicles and Open-RMF navigates all ride lifts
through `LiftRides` (`sim.lifts.rides`); each keeps only what is its own (when to call, how to
report). A ride goes:

1. **call** (`call`): the robot, at the lift's entry on its level (never from farther away:
   a lift booked from afar is held while its robot waits for others), asks for the lift at
   its level, bound for another. The lift serves one session at a time; a robot queued at the
   level where the cabin stands for another robot going the same way rides along in that
   session while the cabin has room (a cabin of capacity 2 takes two robots going up), when
   both robots' drivers can place two robots in one cabin (`share`).
2. **enter** (`may_enter`): once the cabin is at its level with its doors open for it.
3. **board** (`board`): the robot stands still inside the cabin (the one boarding test); the
   cabin leaves when everyone of the session who may board has (a robot that keeps it
   waiting `BOARD_WAIT_S` is sent back to the queue).
4. **ride**, then **leave** (`arrived`): the cabin is at the ride's level with its doors
   open; the robot drives out.
5. **let go** (`step`, every step): a robot out of the shaft (the one clearance rule:
   `clear_of_shaft`) is done; the session ends when everyone of it is.

`waiting_on(rider)` says what a robot that waits for a lift waits for (the lift and who holds
it), for wait-for graphs and stall reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.site.rmf_lifts import LIFT_GAP_M, Lift

if TYPE_CHECKING:
    from fleetsim.devices.lifts import LiftDevice, Lifts

CLEAR_M = 0.3  # out of the shaft by the robot's radius and this: the robot is off the lift
BOARD_WAIT_S = 15.0  # a guest that has not boarded this long after the doors opened goes back
STILL_MPS = 1e-3
SLOT_GAP_M = 0.25  # between two robots' footprint circles side by side in a cabin


@dataclass
class Ride:
    """One robot's ride: who rides (the requester), which lift, from and to which level, its
    robot and footprint radius, and where it is (called, admitted, aboard, arrived, done)."""

    rider: str
    lift: str
    start: str
    to: str
    robot: Any
    radius: float
    phase: str = "called"  # called -> aboard -> arrived -> done
    since: float = 0.0  # when the doors opened for it (a guest's boarding time)
    share: bool = False  # may ride in another robot's session (its driver has a place for it)


class LiftRides:
    """The rides of a simulation's lifts (`sim.lifts.rides`)."""

    def __init__(self, lifts: Lifts, specs: list[Lift]) -> None:
        self.lifts = lifts
        self.specs = {spec.name: spec for spec in specs}
        self.rides: dict[str, Ride] = {}  # rider -> its ride
        self.done = 0  # rides completed (the robot carried and out of the shaft)

    # -- a driver's calls ---------------------------------------------------------------------

    def call(
        self,
        rider: str,
        lift: str,
        start: str,
        to: str,
        robot: Any,
        radius: float | None = None,
        share: bool = False,
    ) -> Ride:
        """`rider` (at the lift's entry on `start`) asks for `lift` to ride to `to`; asking
        again is the same ride (a new destination replaces the old while not aboard).
        `radius`: the robot's footprint radius (default: its own, from its box). `share`: it
        may ride along in another robot's session going its way, when its driver can place two
        robots in one cabin."""
        ride = self.rides.get(rider)
        if ride is not None and ride.lift == lift and ride.phase != "done":
            if ride.phase == "called":
                ride.start, ride.to = start, to
                self._queue(ride)
            return ride
        if ride is not None:
            self.cancel(rider)
        if radius is None:
            radius = self._radius(robot)
        ride = Ride(rider, lift, start, to, robot, float(radius), share=share)
        self.rides[rider] = ride
        self._queue(ride)
        return ride

    def _radius(self, robot: Any) -> float:
        """The robot's footprint radius: half the diagonal of its box in the plane."""
        bodies = self.lifts.sim.world.bodies
        return float(bodies.footprint_radii(bodies.rows(self.lifts.sim.handles_of([robot])))[0])

    def _queue(self, ride: Ride) -> None:
        device = self.lifts[ride.lift]
        if device.session != ride.rider and ride.rider not in device.guests:
            self.lifts.request(ride.lift, ride.rider, ride.start)

    def may_enter(self, rider: str) -> bool:
        """Whether the cabin is at the rider's level with its doors open for it."""
        ride = self.rides.get(rider)
        if ride is None:
            return False
        device = self.lifts[ride.lift]
        ready = bool(device.ready(ride.start, rider))
        if ready and ride.since == 0.0:
            ride.since = self.lifts.sim.sim_time
        return ready

    def board(self, rider: str) -> bool:
        """The rider's robot, standing still in the cabin, boards (True once aboard; False
        while it is not inside, not still, or the cabin is not there for it)."""
        ride = self.rides.get(rider)
        if ride is None:
            return False
        if ride.phase != "called":
            return True
        if not self.may_enter(rider) or not self.inside(ride):
            return False
        if not self.lifts.board(ride.lift, rider, ride.robot):
            return False  # full
        ride.phase = "aboard"
        device = self.lifts[ride.lift]
        self._admit(device, [r for r in self.rides.values() if r.lift == ride.lift])
        if device.session == rider:  # the cabin waits for its guests from now on
            for guest in device.guests:
                other = self.rides.get(guest)
                if other is not None and other.phase == "called":
                    other.since = self.lifts.sim.sim_time
        self._depart(device)
        return True

    def arrived(self, rider: str) -> bool:
        """Whether the rider's cabin is at its level with the doors open: it drives out (it
        is off the cabin's floor from now; the ride ends once it is out of the shaft)."""
        ride = self.rides.get(rider)
        if ride is None or ride.phase in ("called", "done"):
            return False
        if ride.phase == "arrived":
            return True
        if not self.lifts[ride.lift].ready(ride.to, rider):
            return False
        self.lifts.alight(ride.lift, rider)
        ride.phase = "arrived"
        return True

    def redirect(self, rider: str, to: str) -> None:
        """The rider now leaves the cabin on level `to` (its route changed while aboard): the
        cabin goes there (at once when it holds the session; a guest once it does)."""
        ride = self.rides.get(rider)
        if ride is None or ride.to == to:
            return
        ride.to = to
        if ride.phase == "arrived":
            ride.phase = "aboard"  # (still in the cabin, now bound elsewhere)
            self.lifts.board(ride.lift, rider, ride.robot)
        if ride.phase == "aboard" and self.lifts[ride.lift].session == rider:
            self.lifts.request(ride.lift, rider, to)

    def cancel(self, rider: str) -> None:
        """The rider no longer wants the lift (a new route, a new order): its call is
        withdrawn, its place in a session given up. A robot aboard keeps riding."""
        ride = self.rides.get(rider)
        if ride is None or ride.phase == "aboard":
            return
        self.rides.pop(rider)
        self.lifts.release(ride.lift, rider)

    def riding(self, rider: str) -> Ride | None:
        """The rider's ride, if it has one under way."""
        return self.rides.get(rider)

    def join(self, rider: str, holder: str, robot: Any, radius: float | None = None) -> bool:
        """`rider`, next in line behind `holder` at the lift's entry and bound for the same
        level, rides in holder's session when both may share a cabin, the cabin is at their
        level for holder and has not left, and it has room; nothing is booked otherwise."""
        theirs = self.rides.get(holder)
        if theirs is None or not theirs.share or not self._open(theirs):
            return False
        mine = self.rides.get(rider)
        if mine is not None and mine.phase != "called":
            return False
        ride = self.call(rider, theirs.lift, theirs.start, theirs.to, robot, radius, share=True)
        if rider in self.lifts[ride.lift].guests or self.lifts.admit(ride.lift, rider):
            ride.since = ride.since or self.lifts.sim.sim_time  # (the boarding wait starts)
            return True
        self.cancel(rider)
        return False

    def _open(self, holder: Ride) -> bool:
        """Whether holder's cabin stands at its level for it and has not been sent on."""
        device = self.lifts[holder.lift]
        return bool(
            device.session == holder.rider
            and holder.phase in ("called", "aboard")
            and device.level == holder.start
            and device.target in (None, holder.start)
        )

    # -- geometry: one rule for in the cabin and out of the shaft -------------------------------

    def slots(self, lift: str, radius: float, entry_xy: Any) -> np.ndarray:
        """Where robots of footprint `radius` stand in the cabin (world (k, 2)): side by side
        across the way in from `entry_xy`, `SLOT_GAP_M` apart, as many as fit and the capacity
        allows; the cabin's centre alone when two do not fit."""
        spec, capacity = self.specs[lift], self.lifts[lift].capacity
        ex, ey = spec.local(entry_xy)[0]
        along_x = abs(ey) > abs(ex)  # in along the cabin's depth: side by side along its width
        room, other = (spec.width, spec.depth) if along_x else (spec.depth, spec.width)
        pitch = 2 * radius + SLOT_GAP_M
        count = min(capacity, int(room // pitch)) if 2 * radius <= other else 1
        local = np.zeros((max(count, 1), 2))
        local[:, 0 if along_x else 1] = (np.arange(len(local)) - (len(local) - 1) / 2) * pitch
        return spec.world(local)

    def inside(self, ride: Ride) -> bool:
        """The robot stands still inside the cabin (its centre within the cabin's floor)."""
        spec = self.specs[ride.lift]
        (vx, vy, _), _yaw_rate = ride.robot.get_velocity()
        if math.hypot(vx, vy) > STILL_MPS or ride.robot.is_moving:
            return False
        lx, ly = spec.local(ride.robot.get_pose().position[:2])[0]
        return bool(abs(lx) <= spec.width / 2 and abs(ly) <= spec.depth / 2)

    def clear_of_shaft(self, lift: str, xy: Any, radius: float) -> bool:
        """Whether a robot of footprint `radius` at `xy` is out of the lift's shaft by
        `CLEAR_M` (the rule for letting go, for every driver)."""
        spec = self.specs[lift]
        lx, ly = spec.local(xy)[0]
        reach_w = spec.width / 2 + LIFT_GAP_M + radius + CLEAR_M
        reach_d = spec.depth / 2 + LIFT_GAP_M + radius + CLEAR_M
        return bool(abs(lx) > reach_w or abs(ly) > reach_d)

    def _parked_out(self, ride: Ride, xy: Any) -> bool:
        """The robot stopped for good just outside the cabin (its goal is by the lift)."""
        if ride.robot.is_moving:
            return False
        spec = self.specs[ride.lift]
        lx, ly = spec.local(xy)[0]
        return bool(
            abs(lx) > spec.width / 2 + ride.radius or abs(ly) > spec.depth / 2 + ride.radius
        )

    # -- every step ---------------------------------------------------------------------------

    def step(self) -> None:
        """Admit robots going the same way into sessions with room, send cabins whose riders
        have all boarded, and let go of riders out of the shaft."""
        if not self.rides:
            return
        now = self.lifts.sim.sim_time
        by_lift: dict[str, list[Ride]] = {}
        for ride in self.rides.values():
            by_lift.setdefault(ride.lift, []).append(ride)
        for name, rides in by_lift.items():
            device = self.lifts[name]
            self._admit(device, rides)
            self._depart(device)
            for ride in rides:
                if (
                    ride.phase == "called"
                    and ride.rider in device.guests
                    and ride.since > 0
                    and (now - ride.since > BOARD_WAIT_S and device.level == ride.start)
                ):  # a guest that keeps the cabin waiting: back in the queue
                    self.lifts.release(name, ride.rider)
                    ride.since = 0.0
                    self._queue(ride)
                if ride.phase == "arrived":
                    xy = ride.robot.get_pose().position[:2]
                    if self.clear_of_shaft(name, xy, ride.radius) or self._parked_out(ride, xy):
                        ride.phase = "done"
                        self.rides.pop(ride.rider)
                        self.lifts.release(name, ride.rider)
                        self.done += 1

    def _admit(self, device: LiftDevice, rides: list[Ride]) -> None:
        """Robots queued where the cabin stands for a session going their way (its holder
        not yet gone) ride along."""
        holder = self.rides.get(device.session or "")
        if holder is None or not holder.share or not self._open(holder):
            return
        for ride in rides:
            if (
                ride.phase == "called"
                and ride.share
                and ride is not holder
                and ride.start == holder.start
                and ride.to == holder.to
                and ride.rider not in device.guests
                and self.lifts.admit(device.name, ride.rider)
            ):
                ride.since = ride.since or self.lifts.sim.sim_time

    def _depart(self, device: LiftDevice) -> None:
        """The cabin leaves for the session's level once everyone of it who may board has."""
        holder = self.rides.get(device.session or "")
        if holder is None or holder.phase != "aboard" or device.target == holder.to:
            return
        members = [self.rides.get(g) for g in device.guests]
        if any(m is not None and m.phase == "called" for m in members):
            return  # a robot of the session is still coming in
        self.lifts.request(device.name, holder.rider, holder.to)

    # -- what a waiting robot waits for -------------------------------------------------------

    def waiting_on(self, rider: str) -> tuple[str, list[str]] | None:
        """(lift, who holds it) for a rider waiting to enter a cabin that is not there for
        it; None when it is not waiting for a lift."""
        ride = self.rides.get(rider)
        if ride is None or ride.phase != "called":
            return None
        device = self.lifts[ride.lift]
        holders = [r for r in (device.session, *device.guests) if r is not None and r != rider]
        return ride.lift, holders

    def progressing(self, lift: str) -> bool:
        """Whether the lift is doing something: its cabin or its doors moving."""
        device = self.lifts[lift]
        return bool(device.moving or device.door.value in ("opening", "closing"))

    def describe(self, rider: str) -> str | None:
        """What the rider waits for at its lift, for reports (None: it has no ride)."""
        ride = self.rides.get(rider)
        if ride is None:
            return None
        device = self.lifts[ride.lift]
        others = [r for r in (device.session, *device.guests) if r not in (None, rider)]
        who = f", held by {', '.join(_short(r) for r in others)}" if others else ""
        return f"lift {device.name} (at {device.level}, doors {device.door.value}{who})"


def _short(rider: str | None) -> str:
    """A requester without the driver's prefix ("robot:amr_0" -> "amr_0")."""
    return (rider or "").split(":", 1)[-1]
