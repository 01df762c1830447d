"""Doors and lifts over HTTP beside the fleet-manager API, modelled on Open-RMF's messages.

`POST door_request` takes a `rmf_door_msgs/DoorRequest` as JSON (`door_name`, `requester_id`,
`requested_mode: {value}`: 0 closed, 2 open); `GET door_states` answers `DoorState`s
(`door_time`, `door_name`, `current_mode: {value}`: 0 closed, 1 moving, 2 open). `POST
lift_request` takes a `rmf_lift_msgs/LiftRequest` (`lift_name`, `session_id`, `request_type`:
0 end the session, 1 AGV, 2 human; `destination_floor`; `door_state` is the cabin's to open
there, which fleetsim's lifts always do); `GET lift_states` answers `LiftState`s (`lift_time`,
`lift_name`, `available_floors`, `current_floor`, `destination_floor`, `door_state`,
`motion_state`: 0 stopped, 1 up, 2 down; `available_modes` [1 human, 2 AGV], `current_mode`:
1 human, 2 AGV while a session of request type 1 (or a robot's ride) holds it, 4 offline while
out of service; `session_id`). Commands run in the simulation's next step; answers use the
fleet manager's envelope, and an unknown door, lift or floor, or an empty `session_id`, is
`success: false` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from fleetsim.interfaces.rmf.fleet import RmfFleet

DOOR_CLOSED, DOOR_MOVING, DOOR_OPEN = 0, 1, 2
END_SESSION, AGV_MODE, HUMAN_MODE = 0, 1, 2  # LiftRequest.request_type
STOPPED, UP, DOWN = 0, 1, 2
MODE_HUMAN, MODE_AGV, MODE_OFFLINE = 1, 2, 4  # LiftState.current_mode


class Mode(BaseModel):
    """RMF's mode message: `{value: int}`."""

    value: int = Field(ge=0, le=2)


class DoorRequest(BaseModel):
    """RMF's `DoorRequest`: which door, who asks, and the mode wanted (0 closed, 2 open)."""

    door_name: str
    requester_id: str = "rmf"
    requested_mode: Mode


class LiftRequest(BaseModel):
    """RMF's `LiftRequest`: which lift, the session, the request type (0 end, 1 AGV) and the
    destination floor."""

    lift_name: str
    session_id: str
    request_type: int = Field(1, ge=0, le=2)
    destination_floor: str = ""
    door_state: int = Field(DOOR_OPEN, ge=0, le=2)


def door_mode(mode: str) -> int:
    """RMF's door mode number for a `DoorMode` value."""
    return {"closed": DOOR_CLOSED, "open": DOOR_OPEN}.get(mode, DOOR_MOVING)


def door_states(fleet: RmfFleet) -> list[dict[str, Any]]:
    """Every door's state in the shape of RMF's `DoorState`."""
    doors, now = fleet.sim.doors, round(fleet.sim.sim_time, 9)  # (9.6, not 9.600000000000001)
    if doors is None:
        return []
    return [
        {"door_time": now, "door_name": d.name, "current_mode": {"value": door_mode(d.mode)}}
        for d in doors.doors.values()
    ]


def lift_states(fleet: RmfFleet) -> list[dict[str, Any]]:
    """Every lift's state in the shape of RMF's `LiftState`."""
    lifts, now = fleet.sim.lifts, round(fleet.sim.sim_time, 9)
    if lifts is None:
        return []
    out = []
    for lift in lifts.lifts.values():
        goal = lift.elevations[lift.target] if lift.target else lift.z
        motion = STOPPED if abs(goal - lift.z) < 1e-9 else (UP if goal > lift.z else DOWN)
        human = lift.session is not None and lift.session in fleet.human_sessions
        agv = lift.session is not None and not human
        mode = MODE_OFFLINE if not lift.in_service else MODE_AGV if agv else MODE_HUMAN
        out.append(
            {
                "lift_time": now,
                "lift_name": lift.name,
                "available_floors": lift.levels,
                "current_floor": lift.level,
                "destination_floor": lift.target or lift.level,
                "door_state": door_mode(lift.door.value),
                "motion_state": motion,
                "available_modes": [MODE_HUMAN, MODE_AGV],
                "current_mode": mode,
                "session_id": lift.session or "",
            }
        )
    return out


def check_door(fleet: RmfFleet, request: DoorRequest) -> str | None:
    """Why the request cannot be done (None: it can)."""
    doors = fleet.sim.doors
    if doors is None or request.door_name not in doors.doors:
        known = ", ".join(doors.doors) if doors is not None else "none"
        return f"no door {request.door_name!r} (doors: {known})"
    if request.requested_mode.value == DOOR_MOVING:
        return "requested_mode 1 (moving) is not a mode a door can be asked for: use 0 or 2"
    return None


def check_lift(fleet: RmfFleet, request: LiftRequest) -> str | None:
    """Why the lift request cannot be carried out (an unknown lift, a floor it does not serve), or
    None."""
    lifts = fleet.sim.lifts
    if lifts is None or request.lift_name not in lifts.lifts:
        known = ", ".join(lifts.lifts) if lifts is not None else "none"
        return f"no lift {request.lift_name!r} (lifts: {known})"
    if not request.session_id.strip():
        return "session_id is empty: name the session that asks (RMF's fleet adapter sends its own)"
    floors = lifts.lifts[request.lift_name].levels
    if request.request_type != END_SESSION and request.destination_floor not in floors:
        floor = request.destination_floor
        return f"lift {request.lift_name} serves {', '.join(floors)}, not {floor!r}"
    return None


def apply_door(fleet: RmfFleet, request: DoorRequest) -> None:
    """Queue the door request for the next step."""
    doors, want = fleet.sim.doors, request.requested_mode.value == DOOR_OPEN
    if doors is not None:  # (check_door said so before)
        fleet.submit(lambda: doors.request(request.door_name, request.requester_id, want))


def apply_lift(fleet: RmfFleet, request: LiftRequest) -> None:
    """Queue the lift request (or the end of its session) for the next step."""
    lifts = fleet.sim.lifts
    if lifts is None:  # (check_lift said so before)
        return
    if request.request_type == END_SESSION:
        fleet.human_sessions.discard(request.session_id)
        fleet.submit(lambda: lifts.release(request.lift_name, request.session_id))
        return
    if request.request_type == HUMAN_MODE:
        fleet.human_sessions.add(request.session_id)
    else:
        fleet.human_sessions.discard(request.session_id)
    fleet.submit(
        lambda: lifts.request(request.lift_name, request.session_id, request.destination_floor)
    )
