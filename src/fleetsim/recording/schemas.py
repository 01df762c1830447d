"""The schemas a recording's channels carry: Foxglove's protobuf messages (as the file
descriptor sets MCAP readers and Foxglove expect) and JSON Schemas for fleetsim's own tables."""

from __future__ import annotations

import json
from typing import Any

from fleetsim.errors import FleetSimError

NEEDS = 'recordings need the mcap and Foxglove schema packages: pip install "fleetsim[record]"'


def foxglove(name: str) -> Any:
    """The message class `foxglove.<name>` (PointCloud, SceneUpdate, ...)."""
    try:
        module = __import__(f"foxglove_schemas_protobuf.{name}_pb2", fromlist=[name])
    except ImportError:
        raise FleetSimError(NEEDS) from None
    return getattr(module, name)


def varint(n: int) -> bytes:
    """`n` as a protobuf varint."""
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def descriptor_set(message_class: Any) -> bytes:
    """A FileDescriptorSet holding the message's .proto file and everything it imports."""
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()

    def add(file: Any) -> None:
        if file.name in seen:
            return
        seen.add(file.name)
        for dependency in file.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        files.file.append(proto)

    add(message_class.DESCRIPTOR.file)
    return bytes(files.SerializeToString())


def json_schema(title: str, properties: dict[str, Any]) -> bytes:
    """A JSON Schema (for a JSON channel) with `title` and `properties`, as bytes."""
    return json.dumps({"title": title, "type": "object", "properties": properties}).encode()


ROBOTS = json_schema(
    "fleetsim.Robots",
    {
        "names": {"type": "array", "items": {"type": "string"}},
        "handles": {"type": "array", "items": {"type": "integer"}},
    },
)
"""`/fleet/robots`: which robot each `id` in `/fleet` is (sent at the start and on change)."""

FLEET_STATE = json_schema(
    "fleetsim.FleetState",
    {
        "time": {"type": "number"},
        "states": {"type": "array", "items": {"type": "string"}},
        "state": {"type": "array", "items": {"type": "integer"}},
        "task": {"type": "array", "items": {"type": ["string", "null"]}},
        "battery": {"type": ["array", "null"], "items": {"type": ["number", "null"]}},
        "speed": {"type": "array", "items": {"type": "number"}},
    },
)
"""`/fleet/state`: per robot, in `/fleet/robots` order, once a simulated second: `state[i]`
indexes `states` (idle, moving, waiting, working, charging, failed), `task` is the task id or
null, `battery` percent (null without a battery model; a null item for a robot the fleet
manager does not run), `speed` m/s."""

EVENT = json_schema(
    "fleetsim.Event",
    {
        "kind": {"type": "string"},
        "time": {"type": "number"},
    },
)
"""`/events`: a collision, an action started, done or failed, ... with its simulated time."""

KPI = json_schema("fleetsim.Kpi", {"time": {"type": "number"}})
"""`/kpi`: one point of the KPI time series."""
