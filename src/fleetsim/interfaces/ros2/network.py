"""Where a bridge's ROS 2 traffic goes: its domain, and loopback only unless told otherwise.

Fast DDS is told through a profiles file (`FASTRTPS_DEFAULT_PROFILES_FILE`) to use UDP on
127.0.0.1 alone, and ROS 2 to discover only on this host (`ROS_AUTOMATIC_DISCOVERY_RANGE`);
a node of another process on this machine with the same settings (`loopback_environment`)
reaches the bridge, nothing off the machine does. Fast DDS reads its profiles once a process,
when its first participant is made: set them before the first bridge or node of the process.
The profile also shortens the participants' lease to 4 s (Fast DDS's default is 20 s): a
process that dies without a goodbye is forgotten by the others 4 s later.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fleetsim import environment
from fleetsim.errors import ConfigError

LOOPBACK_PROFILES = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>fleetsim_loopback</transport_id>
      <type>UDPv4</type>
      <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="fleetsim_loopback" is_default_profile="true">
    <rtps>
      <builtin>
        <discovery_config>
          <leaseDuration><sec>4</sec></leaseDuration>
          <leaseAnnouncement><sec>1</sec></leaseAnnouncement>
        </discovery_config>
      </builtin>
      <userTransports><transport_id>fleetsim_loopback</transport_id></userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
"""
MAX_DOMAIN_ID = 101  # (ROS 2's default port mapping; above it, ports collide across domains)


def profiles_file() -> Path:
    """The loopback profiles, written once per user in the temp folder."""
    path = Path(tempfile.gettempdir()) / f"fleetsim-fastdds-loopback-{os.getuid()}.xml"
    if not path.exists() or path.read_text() != LOOPBACK_PROFILES:
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(LOOPBACK_PROFILES)
        partial.replace(path)
    return path


def check_domain(domain_id: int) -> int:
    """`domain_id` if ROS 2 takes it (0 to 101)."""
    if isinstance(domain_id, bool) or not isinstance(domain_id, int):
        raise ConfigError(f"a ROS 2 domain id is a whole number, got {domain_id!r}")
    if not 0 <= domain_id <= MAX_DOMAIN_ID:
        raise ConfigError(f"ROS 2 domain id {domain_id}: use 0 to {MAX_DOMAIN_ID}")
    return domain_id


def loopback_environment(domain_id: int) -> dict[str, str]:
    """The variables that keep a process's ROS 2 traffic on this machine's loopback, in domain
    `domain_id`: for the bridge's process (`apply`) and for the nodes that talk to it."""
    return {
        "ROS_DOMAIN_ID": str(check_domain(domain_id)),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "FASTRTPS_DEFAULT_PROFILES_FILE": str(profiles_file()),
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
    }


def apply(variables: dict[str, str]) -> None:
    """Set `variables` in this process's environment (before its first ROS 2 participant)."""
    environment.export(variables)
