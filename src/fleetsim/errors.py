"""The fleetsim exception hierarchy: every error fleetsim raises on purpose is a `FleetSimError`.

Each subclass also derives from the built-in exception a Python user would expect to catch
(`ValueError`, `FileNotFoundError`, `LookupError`, `RuntimeError`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class FleetSimError(Exception):
    """Base class of all fleetsim errors."""


class ConfigError(FleetSimError, ValueError):
    """A parameter, a config key or a value is wrong. The message names it and the fix."""


class AssetNotFoundError(FleetSimError, FileNotFoundError):
    """A file the simulation needs (mesh, URDF, config) does not exist."""


class AssetError(FleetSimError, ValueError):
    """A file the simulation needs exists but cannot be used (an empty or corrupt mesh)."""


class ObjectRemovedError(FleetSimError, LookupError):
    """A handle was used after its body was removed or the simulation was reset."""


class SimulationClosedError(FleetSimError, RuntimeError):
    """The simulation was used after `close()`."""


class EntryError(FleetSimError, RuntimeError):
    """A hosted entry (a user's planner, scheduler or executor) raised, answered in a shape
    its interface does not allow, or ran out of its time. The message names the entry, the
    call and the tick."""


class EntryTimeoutError(EntryError):
    """A hosted entry ran past a limit the kit enforces by stopping the run (its preprocessing
    limit): the kit exits with code 124 (`exit_code`), and so does `fleetsim lorr run`."""

    exit_code = 124


class BackendError(FleetSimError, RuntimeError):
    """PyBullet refused an operation (connection, shape or body creation)."""


def is_finite_number(value: object) -> bool:
    """A real number that is finite (not a bool, a string, NaN or infinity): what input
    checks ask of coordinates, speeds and durations."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `name`, or None when nothing is reasonably close."""
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.5)
    return matches[0] if matches else None


def named(table: Mapping[str, T], name: str, what: str) -> T:
    """`table[name]`, or a ConfigError naming the closest name (`what`: "door", "lift")."""
    item = table.get(name)
    if item is None:
        guess = closest(str(name), list(table))
        hint = f"did you mean '{guess}'?" if guess else f"{len(table)} {what}s"
        raise ConfigError(f"unknown {what} '{name}': {hint}")
    return item


def unknown_key_message(key: str, valid: Iterable[str], where: str) -> str:
    """A message for an unknown key: names it, the place, and the closest valid key."""
    valid = sorted(valid)
    guess = closest(key, valid)
    hint = f"did you mean '{guess}'?" if guess else f"valid keys: {', '.join(valid)}"
    return f"unknown key '{key}' in {where}: {hint}"
