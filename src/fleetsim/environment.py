"""The environment variables fleetsim reads: all of them, read here and nowhere else.

Each is read when it is asked for, never at import. `VARIABLES` lists them with what they do;
the documentation's environment page is generated from it.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from fleetsim.errors import ConfigError


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, what it does and its default."""

    name: str
    what: str
    default: str = ""


NO_NUMBA = Variable("FLEETSIM_NO_NUMBA", "Any value: never use Numba's compiled kernels.")
MAX_SITE_GB = Variable(
    "FLEETSIM_MAX_SITE_GB",
    "Gigabytes a site's navigation graph may need before it is refused (a grid map or a "
    "generated layout); more than the machine has is refused whatever this says.",
    "3",
)
THREADS = Variable(
    "FLEETSIM_THREADS",
    "Threads the step of a large fleet (tens of thousands of robots) may use: its biggest "
    "compiled kernels run in halves on two. 1 keeps it to one (a sweep's workers do). "
    "Default: 2 on a machine with two cores or more.",
)
RMF_TOKEN = Variable(
    "FLEETSIM_RMF_TOKEN", "`fleetsim rmf --token`: the bearer token every request must carry."
)
MQTT_PASSWORD = Variable(
    "FLEETSIM_MQTT_PASSWORD", "`fleetsim vda5050 --password`: the MQTT broker's password."
)
AMENT_PREFIX_PATH = Variable(
    "AMENT_PREFIX_PATH",
    "ROS 2 install prefixes (a sourced ROS workspace sets it): robot models are looked up in "
    "their packages, and `package://` meshes resolved.",
)
ROBOT_DESCRIPTIONS_CACHE = Variable(
    "ROBOT_DESCRIPTIONS_CACHE",
    "Where the `robot_descriptions` package keeps the descriptions it has downloaded; fleetsim "
    "only reads what is there.",
    "~/.cache/robot_descriptions",
)
DISPLAY = Variable(
    "DISPLAY",
    "X display: with one (and tkinter), the data monitor (`monitor: true`) opens a window; "
    "without, it draws in the terminal.",
)

VARIABLES = (
    NO_NUMBA,
    THREADS,
    MAX_SITE_GB,
    RMF_TOKEN,
    MQTT_PASSWORD,
    AMENT_PREFIX_PATH,
    ROBOT_DESCRIPTIONS_CACHE,
    DISPLAY,
)


def _get(variable: Variable) -> str:
    return os.environ.get(variable.name, "")


def numba_allowed() -> bool:
    """False when `FLEETSIM_NO_NUMBA` is set (to anything)."""
    return not _get(NO_NUMBA)


def threads() -> int:
    """`FLEETSIM_THREADS` (at least 1), or 2 with two cores or more, else 1; a value that is
    not a whole number is a `ConfigError`."""
    raw = _get(THREADS)
    if not raw:
        return 2 if _cores() >= 2 else 1
    try:
        return max(1, int(raw))
    except ValueError:
        raise ConfigError(f"{THREADS.name}={raw!r}: expected a whole number, such as 1") from None


@functools.cache
def _cores() -> int:
    """The machine's cores (asked once: a large fleet's step asks several times)."""
    return os.cpu_count() or 1


def max_site_gb() -> float:
    """`FLEETSIM_MAX_SITE_GB`, or 3 GB; a value that is not a number is a `ConfigError`."""
    raw = _get(MAX_SITE_GB)
    try:
        return float(raw) if raw else float(MAX_SITE_GB.default)
    except ValueError:
        raise ConfigError(f"{MAX_SITE_GB.name}={raw!r}: expected gigabytes, such as 8") from None


def ros_prefixes() -> list[Path]:
    """The install prefixes in `AMENT_PREFIX_PATH`, in order."""
    return [Path(p) for p in _get(AMENT_PREFIX_PATH).split(os.pathsep) if p]


def robot_descriptions_cache() -> Path:
    """`ROBOT_DESCRIPTIONS_CACHE`, or `~/.cache/robot_descriptions`, expanded."""
    return Path(_get(ROBOT_DESCRIPTIONS_CACHE) or ROBOT_DESCRIPTIONS_CACHE.default).expanduser()


def has_display() -> bool:
    """Whether `DISPLAY` names an X display."""
    return bool(_get(DISPLAY))


def export(values: dict[str, str]) -> None:
    """Set variables for the libraries this process loads and the processes it starts (the ROS
    2 bridge's DDS settings: `fleetsim.interfaces.ros2.network`); the one place that writes the
    environment, as this module is the one that reads it."""
    os.environ.update(values)
