"""VDA 5050 messages (version 2.0, and the optional fields 2.1 adds), written from the
standard's text as pydantic models: the same models parse what a master control sends and build
what a vehicle publishes. Field names are the standard's (camelCase on the wire, snake_case in
Python); optional fields left as None are left out of the JSON.

Inbound messages (`Order`, `InstantActions`) are checked for types and required fields here; the
rules between fields (sequence ids, base and horizon) are in `order_rules`.
"""

from __future__ import annotations

import itertools
import json
import math
from datetime import datetime, timezone
from enum import Enum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

UINT32 = 2**32 - 1
M = TypeVar("M", bound="Message")


class Message(BaseModel):
    """camelCase on the wire; unknown fields are kept out (a newer master control may send
    fields this version does not know, which the standard lets a vehicle ignore)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> str:
        """The message as JSON: camelCase names, fields that are None left out."""
        return self.model_dump_json(by_alias=True, exclude_none=True)


class Header(Message):
    """The header of every message: headerId, timestamp, version, manufacturer, serialNumber."""

    header_id: int = Field(ge=0, le=UINT32)
    timestamp: str
    version: str
    manufacturer: str
    serial_number: str

    @field_validator("timestamp")
    @classmethod
    def _iso8601(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"timestamp {value!r} is not ISO 8601 (YYYY-MM-DDTHH:mm:ss.ssZ)"
            ) from None
        return value


def timestamp(seconds: float) -> str:
    """An ISO 8601 UTC timestamp with milliseconds for `seconds` since the epoch."""
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# -- orders -----------------------------------------------------------------------------------


class BlockingType(str, Enum):
    """How an action blocks driving and other actions: NONE, SOFT or HARD."""

    NONE = "NONE"  # driving and other actions allowed
    SOFT = "SOFT"  # other actions allowed, no driving
    HARD = "HARD"  # the only action at the time


class ActionParameter(Message):
    """A key and value given to an action."""

    key: str
    value: Any


class Action(Message):
    """An action of an order or of instantActions: type, id, blocking type and parameters."""

    action_type: str
    action_id: str
    action_description: str | None = None
    blocking_type: BlockingType
    action_parameters: list[ActionParameter] | None = None

    def parameter(self, key: str, default: Any = None) -> Any:
        """The value of parameter `key`, or `default`."""
        for p in self.action_parameters or ():
            if p.key == key:
                return p.value
        return default


class NodePosition(Message):
    """Where a node is: x, y, theta, the allowed deviations and the map."""

    x: float
    y: float
    theta: float | None = Field(None, ge=-math.pi, le=math.pi)
    allowed_deviation_xy: float | None = Field(None, ge=0, alias="allowedDeviationXY")
    allowed_deviation_theta: float | None = Field(None, ge=0, le=math.pi)
    map_id: str
    map_description: str | None = None


class Node(Message):
    """An order's node: id, sequence id, released or not, position and actions."""

    node_id: str
    sequence_id: int = Field(ge=0, le=UINT32)
    node_description: str | None = None
    released: bool
    node_position: NodePosition | None = None
    actions: list[Action]


class ControlPoint(Message):
    """A NURBS control point of an edge's trajectory."""

    x: float
    y: float
    weight: float = Field(1.0, gt=0)


class Trajectory(Message):
    """A NURBS: degree, knot vector (non-decreasing, in [0, 1], control points + degree + 1
    values) and control points (the first and last are the curve's ends)."""

    degree: int = Field(ge=1)
    knot_vector: list[float]
    control_points: list[ControlPoint] = Field(min_length=2)

    @field_validator("knot_vector")
    @classmethod
    def _knots(cls, knots: list[float]) -> list[float]:
        if any(not 0.0 <= k <= 1.0 for k in knots) or any(
            b < a for a, b in itertools.pairwise(knots)
        ):
            raise ValueError("knotVector must be non-decreasing values in [0, 1]")
        return knots


class OrientationType(str, Enum):
    """How an edge's orientation is meant: GLOBAL or TANGENTIAL."""

    GLOBAL = "GLOBAL"
    TANGENTIAL = "TANGENTIAL"


class Edge(Message):
    """An order's edge: ids, released or not, its nodes, limits, trajectory and actions."""

    edge_id: str
    sequence_id: int = Field(ge=0, le=UINT32)
    edge_description: str | None = None
    released: bool
    start_node_id: str
    end_node_id: str
    max_speed: float | None = Field(None, gt=0)
    max_height: float | None = Field(None, ge=0)
    min_height: float | None = Field(None, ge=0)
    orientation: float | None = Field(None, ge=-math.pi, le=math.pi)
    orientation_type: OrientationType | None = None
    direction: str | None = None
    rotation_allowed: bool | None = None
    max_rotation_speed: float | None = Field(None, gt=0)
    trajectory: Trajectory | None = None
    length: float | None = Field(None, ge=0)
    actions: list[Action]


class Order(Header):
    """The `order` message: nodes and edges to drive, the base released and the horizon not."""

    order_id: str
    order_update_id: int = Field(ge=0, le=UINT32)
    zone_set_id: str | None = None
    nodes: list[Node] = Field(min_length=1)
    edges: list[Edge]


class InstantActions(Header):
    """The `instantActions` message: actions to run now."""

    actions: list[Action]


# -- state ------------------------------------------------------------------------------------


class NodeState(Message):
    """A node of the order not yet passed, as the state reports it."""

    node_id: str
    sequence_id: int
    node_description: str | None = None
    node_position: NodePosition | None = None
    released: bool


class EdgeState(Message):
    """An edge of the order not yet passed, as the state reports it."""

    edge_id: str
    sequence_id: int
    edge_description: str | None = None
    released: bool
    trajectory: Trajectory | None = None


class AgvPosition(Message):
    """Where the vehicle is: x, y, theta, the map and whether the position is initialised."""

    x: float
    y: float
    theta: float
    map_id: str
    map_description: str | None = None
    position_initialized: bool
    localization_score: float | None = None
    deviation_range: float | None = None


class Velocity(Message):
    """The vehicle's velocity: vx, vy, omega."""

    vx: float | None = None
    vy: float | None = None
    omega: float | None = None


class Load(Message):
    """A load the vehicle carries."""

    load_id: str | None = None
    load_type: str | None = None
    load_position: str | None = None
    weight: float | None = None


class ActionStatus(str, Enum):
    """An action's status: WAITING, INITIALIZING, RUNNING, PAUSED, FINISHED or FAILED."""

    WAITING = "WAITING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FINISHED = "FINISHED"
    FAILED = "FAILED"


class ActionState(Message):
    """An action's state as the state reports it: id, type, status and result."""

    action_id: str
    action_type: str | None = None
    action_description: str | None = None
    action_status: ActionStatus
    result_description: str | None = None


class BatteryState(Message):
    """The battery: charge (percent), voltage, health, charging, reach."""

    battery_charge: float = Field(ge=0, le=100)  # percent
    battery_voltage: float | None = None
    battery_health: float | None = None
    charging: bool
    reach: float | None = None


class ErrorLevel(str, Enum):
    """An error's level: WARNING or FATAL."""

    WARNING = "WARNING"
    FATAL = "FATAL"


class ErrorReference(Message):
    """What an error refers to: a key (orderId, nodeId, ...) and its value."""

    reference_key: str
    reference_value: str


class Error(Message):
    """An error the vehicle reports: type, level, description and references."""

    error_type: str  # validationError, orderError, orderUpdateError, noRouteError, ...
    error_references: list[ErrorReference] | None = None
    error_description: str | None = None
    error_level: ErrorLevel


class InfoLevel(str, Enum):
    """An information's level: INFO or DEBUG."""

    INFO = "INFO"
    DEBUG = "DEBUG"


class Information(Message):
    """Information the vehicle reports."""

    info_type: str
    info_references: list[ErrorReference] | None = None  # same shape: a key and a value
    info_description: str | None = None
    info_level: InfoLevel


class EStop(str, Enum):
    """The emergency stop: AUTOACK, MANUAL, REMOTE or NONE."""

    AUTOACK = "AUTOACK"
    MANUAL = "MANUAL"
    REMOTE = "REMOTE"
    NONE = "NONE"


class SafetyState(Message):
    """The safety state: the emergency stop and whether a protective field is violated."""

    e_stop: EStop = EStop.NONE
    field_violation: bool = False


class OperatingMode(str, Enum):
    """Who is in charge of the vehicle: AUTOMATIC, SEMIAUTOMATIC, MANUAL, SERVICE or TEACHIN."""

    AUTOMATIC = "AUTOMATIC"
    SEMIAUTOMATIC = "SEMIAUTOMATIC"
    MANUAL = "MANUAL"
    SERVICE = "SERVICE"
    TEACHIN = "TEACHIN"


class State(Header):
    """The `state` message: the order's progress, position, velocity, loads, actions, battery,
    errors and safety."""

    order_id: str
    order_update_id: int
    zone_set_id: str | None = None
    last_node_id: str
    last_node_sequence_id: int
    driving: bool
    paused: bool | None = None
    new_base_request: bool | None = None
    distance_since_last_node: float | None = None
    operating_mode: OperatingMode = OperatingMode.AUTOMATIC
    node_states: list[NodeState]
    edge_states: list[EdgeState]
    agv_position: AgvPosition | None = None
    velocity: Velocity | None = None
    loads: list[Load] | None = None
    action_states: list[ActionState]
    battery_state: BatteryState
    errors: list[Error]
    information: list[Information] | None = None
    safety_state: SafetyState = Field(default_factory=SafetyState)


class ConnectionState(str, Enum):
    """A connection state: ONLINE, OFFLINE or CONNECTIONBROKEN."""

    ONLINE = "ONLINE"
    OFFLINE = "OFFLINE"
    CONNECTIONBROKEN = "CONNECTIONBROKEN"


class Connection(Header):
    """The `connection` message (also the broker's last will)."""

    connection_state: ConnectionState


class Visualization(Header):
    """The `visualization` message: position and velocity only, sent more often."""

    agv_position: AgvPosition | None = None
    velocity: Velocity | None = None


# -- parsing ----------------------------------------------------------------------------------


def parse(model: type[M], payload: bytes | str, topic: str) -> M | Error:
    """The message, or the `validationError` a vehicle reports for it (malformed JSON, a
    missing or mistyped field), naming the topic and, when it can be read, the headerId."""
    try:
        raw = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _invalid(topic, None, f"not JSON: {exc}")
    if not isinstance(raw, dict):
        return _invalid(topic, None, f"expected a JSON object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return _invalid(topic, raw, f"{where}: {first['msg']}{more}")


def _invalid(topic: str, raw: dict[str, Any] | None, description: str) -> Error:
    refs: dict[str, Any] = {"topic": topic}
    for key in ("headerId", "orderId", "orderUpdateId"):
        if raw is not None and key in raw and isinstance(raw[key], str | int):
            refs[key] = raw[key]
    return warning("validationError", description, **refs)


def warning(kind: str, description: str, **references: Any) -> Error:
    """An error of level WARNING (the order or action is refused, the vehicle carries on),
    with `references` as its errorReferences."""
    refs = [ErrorReference(reference_key=k, reference_value=str(v)) for k, v in references.items()]
    return Error(
        error_type=kind,
        error_references=refs,
        error_description=description,
        error_level=ErrorLevel.WARNING,
    )


def order_references(order: Order) -> dict[str, Any]:
    """What an error about an order names: its headerId, topic, orderId and orderUpdateId."""
    return {
        "headerId": order.header_id,
        "topic": "order",
        "orderId": order.order_id,
        "orderUpdateId": order.order_update_id,
    }
