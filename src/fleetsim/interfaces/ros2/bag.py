"""A ROS 2 bag of what the bridge publishes (`Ros2Settings(bag=...)`, `fleetsim ros2 --bag`):
rosbag2 with MCAP storage, each topic's `ros2msg` schema, the messages as the CDR bytes that
went out, stamped with simulated time; `ros2 bag info` and `ros2 bag play` read it, and so do
`rosbags` and `mcap-ros2-support`, which the tests use.

`RecordingNode` stands in for the bridge's nodes: the publishers it makes publish as before
and write each message to the bag. The schemas come from `rosbags`' ROS 2 Jazzy type store;
the types it lacks (Open-RMF's) from the definitions `ros2-interfaces` installed beside the
ROS wheels (`share/<package>/msg/`). Navigation feedback goes through the action servers, not
a publisher: it is not in the bag.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError, FleetSimError


def type_name(cls: type) -> str:
    """`pkg/msg/Name` of an rclpy message class."""
    return f"{cls.__module__.split('.')[0]}/msg/{cls.__name__}"


class Bag:
    """A rosbag2 (MCAP) being written; `close()` finishes it (its metadata.yaml)."""

    def __init__(self, path: str | Path, clock: Any) -> None:
        try:
            from rosbags.rosbag2 import StoragePlugin, Writer
            from rosbags.typesys import Stores, get_typestore
        except ImportError as exc:
            raise FleetSimError(f"a ROS 2 bag needs rosbags: pip install rosbags ({exc})") from None
        self.path = Path(path)
        if self.path.exists():
            raise ConfigError(f"ROS 2 bag {self.path}: it exists; give a new folder's name")
        if not self.path.parent.is_dir():
            raise ConfigError(f"ROS 2 bag {self.path}: no folder {self.path.parent} to put it in")
        self.store = get_typestore(Stores.ROS2_JAZZY)
        self.writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.clock = clock  # () -> simulated nanoseconds
        self._connections: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.messages = 0

    def connection(self, topic: str, cls: type, latched: bool, best_effort: bool) -> Any:
        """The bag's connection for `topic` (made on first use)."""
        with self._lock:
            if topic not in self._connections:
                name = type_name(cls)
                self._know(name)
                qos = _qos(latched, best_effort)
                self._connections[topic] = self.writer.add_connection(
                    topic, name, typestore=self.store, offered_qos_profiles=[qos]
                )
            return self._connections[topic]

    def _know(self, name: str) -> None:
        """Register a type rosbags' Jazzy store lacks from its installed definition."""
        if name in self.store.fielddefs:
            return
        from rosbags.typesys import get_types_from_msg

        package = name.split("/")[0]
        folder = Path(sys.prefix) / "share" / package / "msg"
        found = {}
        for path in sorted(folder.glob("*.msg")):
            found.update(get_types_from_msg(path.read_text(), f"{package}/msg/{path.stem}"))
        if name not in found:
            raise FleetSimError(f"ROS 2 bag: no definition of {name} (looked in {folder})")
        self.store.register(found)

    def write(self, connection: Any, data: bytes) -> None:
        """One message (CDR bytes) on `connection`, stamped now (simulated time)."""
        with self._lock:
            self.writer.write(connection, self.clock(), data)
            self.messages += 1

    def close(self) -> None:
        """Finish the bag."""
        with self._lock:
            self.writer.close()


def _qos(latched: bool, best_effort: bool) -> Any:
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    never = QosTime(sec=0, nsec=0)
    return Qos(
        history=QosHistory.KEEP_LAST,
        depth=1 if latched else 10,
        reliability=QosReliability.BEST_EFFORT if best_effort else QosReliability.RELIABLE,
        durability=QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
        deadline=never,
        lifespan=never,
        liveliness=QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=never,
        avoid_ros_namespace_conventions=False,
    )


class RecordedPublisher:
    """An rclpy publisher whose messages also go to the bag."""

    def __init__(self, publisher: Any, bag: Bag, connection: Any, serialize: Any) -> None:
        self.publisher, self.bag, self.connection = publisher, bag, connection
        self.serialize = serialize

    def publish(self, message: Any) -> None:
        """Publish `message` (or its CDR bytes) and write it to the bag."""
        self.publisher.publish(message)
        data = message if isinstance(message, bytes) else self.serialize(message)
        self.bag.write(self.connection, data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.publisher, name)


class RecordingNode:
    """An rclpy node whose publishers are `RecordedPublisher`s; all else is the node's."""

    def __init__(self, node: Any, bag: Bag, serialize: Any) -> None:
        self.node, self.bag, self.serialize = node, bag, serialize

    def create_publisher(self, cls: type, topic: str, qos: Any, **kwargs: Any) -> Any:
        """The node's publisher, recorded."""
        publisher = self.node.create_publisher(cls, topic, qos, **kwargs)
        durability = getattr(getattr(qos, "durability", None), "name", "")
        reliability = getattr(getattr(qos, "reliability", None), "name", "")
        latched, best_effort = "TRANSIENT_LOCAL" in durability, "BEST_EFFORT" in reliability
        connection = self.bag.connection(topic, cls, latched, best_effort)
        return RecordedPublisher(publisher, self.bag, connection, self.serialize)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.node, name)
