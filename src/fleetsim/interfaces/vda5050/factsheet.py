"""The VDA 5050 `factsheet` message (what a vehicle is and can do), written from the standard's
text, and `factsheet_of(robot)`: one built from a simulated robot's model (its size from its
collision box, speeds and accelerations from its motion limits, kinematics from its motion
mode) and the actions fleetsim's vehicles support (`effects.SCOPES`)."""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np
from pydantic import Field

from fleetsim.interfaces.vda5050.effects import SCOPES
from fleetsim.interfaces.vda5050.messages import Header, Message


class AgvKinematic(str, Enum):
    """The factsheet's `agvKinematic`: differential, omnidirectional or threeWheel."""

    DIFF = "DIFF"
    OMNI = "OMNI"
    THREEWHEEL = "THREEWHEEL"


class AgvClass(str, Enum):
    """The factsheet's `agvClass`: forklift, conveyor, tugger or carrier."""

    FORKLIFT = "FORKLIFT"
    CONVEYOR = "CONVEYOR"
    TUGGER = "TUGGER"
    CARRIER = "CARRIER"


class TypeSpecification(Message):
    """The factsheet's `typeSpecification`: the series, its kinematics, class, payload and
    navigation."""

    series_name: str
    series_description: str | None = None
    agv_kinematic: AgvKinematic
    agv_class: AgvClass
    max_load_mass: float = Field(ge=0)  # kg
    localization_types: list[str]  # NATURAL, REFLECTOR, RFID, DMC, SPOT, GRID
    navigation_types: list[str]  # PHYSICAL_LINE_GUIDED, VIRTUAL_LINE_GUIDED, AUTONOMOUS


class PhysicalParameters(Message):
    """The factsheet's `physicalParameters`: speeds, accelerations and size."""

    speed_min: float
    speed_max: float
    acceleration_max: float
    deceleration_max: float
    height_min: float | None = None
    height_max: float
    width: float
    length: float


class Timing(Message):
    """The factsheet's `timing`: the state interval the vehicle keeps to."""

    min_order_interval: float  # s
    min_state_interval: float
    default_state_interval: float | None = None
    visualization_interval: float | None = None


class ProtocolLimits(Message):
    """The factsheet's `protocolLimits`: the maximum lengths of strings and arrays."""

    max_string_lens: dict[str, int] = Field(default_factory=dict)
    max_array_lens: dict[str, int] = Field(default_factory=dict)
    timing: Timing


class ActionParameterSpec(Message):
    """A parameter an action takes, in the factsheet."""

    key: str
    value_data_type: str  # BOOL, NUMBER, INTEGER, FLOAT, STRING, OBJECT, ARRAY
    description: str | None = None
    is_optional: bool | None = None


class AgvAction(Message):
    """An action the vehicle can do, where (node, edge, instant) and with what parameters."""

    action_type: str
    action_description: str | None = None
    action_scopes: list[str]  # INSTANT, NODE, EDGE
    action_parameters: list[ActionParameterSpec] | None = None
    result_description: str | None = None


class OptionalParameter(Message):
    """An optional field of the standard and whether the vehicle supports or needs it."""

    parameter: str
    support: str  # SUPPORTED or REQUIRED
    description: str | None = None


class ProtocolFeatures(Message):
    """The factsheet's `protocolFeatures`: optional fields and the actions supported."""

    optional_parameters: list[OptionalParameter]
    agv_actions: list[AgvAction]


class AgvGeometry(Message):
    """The factsheet's `agvGeometry` (the envelope is left out)."""

    wheel_definitions: list[dict[str, Any]] | None = None
    envelopes2d: list[dict[str, Any]] | None = None
    envelopes3d: list[dict[str, Any]] | None = None


class LoadSpecification(Message):
    """The factsheet's `loadSpecification`: the load positions and sets (none declared)."""

    load_positions: list[str] | None = None
    load_sets: list[dict[str, Any]] | None = None


class Factsheet(Header):
    """The `factsheet` message (VDA 5050 2.0): what the vehicle is and can do."""

    type_specification: TypeSpecification
    physical_parameters: PhysicalParameters
    protocol_limits: ProtocolLimits
    protocol_features: ProtocolFeatures
    agv_geometry: AgvGeometry
    load_specification: LoadSpecification


DESCRIPTIONS = {
    "cancelOrder": "stop and drop the order; its open actions fail",
    "startPause": "stop driving and hold the running actions",
    "stopPause": "drive on and resume the actions",
    "stateRequest": "publish the state now",
    "factsheetRequest": "publish the factsheet now",
    "initPosition": "set the position (refused during an order)",
    "pick": "take the nearest pickable object within 1 m (or record the load)",
    "drop": "put the load down where the vehicle is",
    "startCharging": "start charging (on a charger node)",
    "stopCharging": "stop charging",
    "wait": "do nothing for duration seconds",
    "finePositioning": "settle exactly on the node's position",
}
# The optional order fields the vehicles act on. The standard says a field the factsheet does
# not list is assumed unsupported, and master controls that read the factsheet refuse to send it.
OPTIONAL_FIELDS = {
    "order.nodes.nodePosition": "else the node is looked up on the site by its nodeId",
    "order.nodes.nodePosition.theta": "the vehicle turns to it on the node",
    "order.nodes.nodePosition.allowedDeviationXY": "a node counts as passed within it",
    "order.nodes.nodePosition.allowedDeviationTheta": "met: the vehicle ends on theta exactly",
    "order.edges.maxSpeed": "the vehicle keeps to it on the edge",
    "order.edges.trajectory": "NURBS: the vehicle follows the curve",
    "order.edges.orientation": "the heading on the edge (omnidirectional vehicles; a "
    "differential one takes only the tangential 0)",
    "order.edges.orientationType": "GLOBAL or TANGENTIAL",
}
DURATION = ActionParameterSpec(
    key="duration", value_data_type="NUMBER", description="seconds of work", is_optional=True
)
PARAMETERS = {
    "pick": [
        ActionParameterSpec(key="loadId", value_data_type="STRING", is_optional=True),
        ActionParameterSpec(key="loadType", value_data_type="STRING", is_optional=True),
    ],
    "drop": [ActionParameterSpec(key="loadId", value_data_type="STRING", is_optional=True)],
    "initPosition": [
        ActionParameterSpec(key=k, value_data_type=t, is_optional=o)
        for k, t, o in (
            ("x", "NUMBER", False),
            ("y", "NUMBER", False),
            ("theta", "NUMBER", False),
            ("mapId", "STRING", True),
            ("lastNodeId", "STRING", True),
        )
    ],
}


def factsheet_of(robot: Any, header: dict[str, Any], state_interval: float) -> Factsheet:
    """The factsheet of `robot` (an `Agent`) with the message `header`."""
    bodies = robot.world.bodies
    k = bodies.row(robot.handle)
    size = np.asarray(bodies["aabb_local_max"][k]) - np.asarray(bodies["aabb_local_min"][k])
    v_max, a_max, _, _ = robot.spawn_params.limits
    differential = robot.spawn_params.motion_mode == "differential"
    kinematic = AgvKinematic.DIFF if differential else AgvKinematic.OMNI
    actions = []
    for kind, scopes in SCOPES.items():
        params = PARAMETERS.get(kind, [])
        if kind in ("pick", "drop", "startCharging", "stopCharging", "wait", "finePositioning"):
            params = [*params, DURATION]
        actions.append(
            AgvAction(
                action_type=kind,
                action_description=DESCRIPTIONS[kind],
                action_scopes=list(scopes),
                action_parameters=params or None,
            )
        )
    return Factsheet(
        **header,
        type_specification=TypeSpecification(
            series_name=str(robot.spawn_params.urdf_path),
            series_description="a fleetsim simulated robot",
            agv_kinematic=kinematic,
            agv_class=AgvClass.CARRIER,
            max_load_mass=100.0,
            localization_types=["NATURAL"],
            navigation_types=["AUTONOMOUS"],
        ),
        physical_parameters=PhysicalParameters(
            speed_min=0.0,
            speed_max=float(v_max),
            acceleration_max=float(a_max),
            deceleration_max=float(a_max),
            height_min=float(size[2]),
            height_max=float(size[2]),
            width=float(size[1]),
            length=float(size[0]),
        ),
        protocol_limits=ProtocolLimits(
            timing=Timing(
                min_order_interval=0.0,
                min_state_interval=0.0,
                default_state_interval=state_interval,
            )
        ),
        protocol_features=ProtocolFeatures(
            optional_parameters=[
                OptionalParameter(parameter=path, support="SUPPORTED", description=said)
                for path, said in OPTIONAL_FIELDS.items()
            ],
            agv_actions=actions,
        ),
        agv_geometry=AgvGeometry(),
        load_specification=LoadSpecification(load_positions=["top"]),
    )
