"""VDA 5050 topics: `{interface}/v{major}/{manufacturer}/{serialNumber}/{topic}`, and the QoS
and retain flag the standard gives each topic."""

from __future__ import annotations

from dataclasses import dataclass

from fleetsim.errors import ConfigError

VERSIONS = ("2.0", "2.1")
# topic -> (QoS, retained); what the vehicle subscribes to and what it publishes
INBOUND = {"order": (0, False), "instantActions": (0, False)}
OUTBOUND = {
    "state": (0, False),
    "visualization": (0, False),
    "connection": (1, True),  # the last will, CONNECTIONBROKEN, is retained too
    "factsheet": (0, True),
}


@dataclass(frozen=True)
class Topics:
    """The topic names of one interface, protocol version and manufacturer."""

    interface: str = "uagv"
    version: str = "2.0"
    manufacturer: str = "fleetsim"

    def __post_init__(self) -> None:
        if self.version not in VERSIONS:
            raise ConfigError(
                f"VDA 5050 version must be one of {', '.join(VERSIONS)}, got {self.version!r}"
            )
        for name in ("interface", "manufacturer"):
            value = getattr(self, name)
            if not value or any(c in value for c in "/+#"):
                raise ConfigError(
                    f"VDA 5050 {name} {value!r} must be a non-empty topic level "
                    "(no '/', '+' or '#')"
                )

    @property
    def prefix(self) -> str:
        """`interface/majorVersion/manufacturer`, the start of every topic."""
        return f"{self.interface}/v{self.version.split('.')[0]}/{self.manufacturer}"

    @property
    def protocol_version(self) -> str:
        """The `version` field of every message: major.minor.patch."""
        return f"{self.version}.0"

    def topic(self, serial: str, name: str) -> str:
        """The full topic `name` of vehicle `serial`."""
        return f"{self.prefix}/{serial}/{name}"

    def inbound_filter(self, serial: str = "+") -> list[tuple[str, int]]:
        """(topic filter, QoS) a vehicle (or, with "+", a whole fleet) subscribes to."""
        return [(self.topic(serial, name), qos) for name, (qos, _) in INBOUND.items()]

    def split(self, topic: str) -> tuple[str, str] | None:
        """(serialNumber, topic name) of a topic under this prefix, else None."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        parts = topic[len(head) :].split("/")
        return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None
