"""`load_problem`: a LoRR start-kit problem, as the kit reads it: its input JSON (`mapFile`,
`agentFile`, `taskFile` relative to the JSON's folder, `teamSize`, `numTasksReveal`,
`agentCounter`, `agentSize`, `delayConfig`), the grid map, the robots' starts and the tasks.

Locations are the kit's: row * width + column. The map follows the kit's reading, not
`fleetsim.site`'s: `@` and `T` are obstacles and every other character is free (so a map's
`E` and `S` stations, and any other letter, can be driven on). Agents and tasks files: lines
starting with `#` are comments; the first number is the count; then one start a line, or one
task a line (its errands' locations separated by commas). The kit takes the first `teamSize`
starts. Every error names the file, the line and what to change.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.faults.delays import DelayConfig

OBSTACLES = "@T"
MAX_REVEALED = 10_000_000  # tasks revealed at once (numTasksReveal x teamSize)
_REQUIRED = ("mapFile", "agentFile", "taskFile", "teamSize", "delayConfig")
_KNOWN = (*_REQUIRED, "numTasksReveal", "agentCounter", "agentSize", "version")


@dataclass(frozen=True)
class Problem:
    """A kit problem: the map (`blocked`, rows x cols, row-major), the starts (team size,
    locations), the tasks (each a tuple of errand locations, in order) and the settings."""

    source: Path
    map_name: str
    rows: int
    cols: int
    blocked: np.ndarray
    starts: np.ndarray
    tasks: list[tuple[int, ...]]
    reveal: float
    agent_counter: int
    agent_size: float
    delays: DelayConfig
    version: str

    @property
    def team_size(self) -> int:
        """Robots in the run."""
        return len(self.starts)


def load_problem(path: str | Path) -> Problem:
    """Read a kit input JSON and the files it names."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"LoRR input not found: {path}")
    text = _read_text(source, "the input")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source} line {exc.lineno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise ConfigError(
            f"{source}: nested too deeply to be a kit input (arrays or objects "
            "inside each other thousands of times)"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the input must be a JSON object (mapFile, agentFile, ...)")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise ConfigError(
            f"{source}: '{missing[0]}' is missing (the kit needs {', '.join(_REQUIRED)})"
        )
    unknown = sorted(set(data) - set(_KNOWN))
    if unknown:
        raise ConfigError(f"{source}: unknown key '{unknown[0]}' (known: {', '.join(_KNOWN)})")
    team = _whole(data, "teamSize", source, least=1)
    counter = _whole(data, "agentCounter", source, least=1, default=1)
    size = _number(data, "agentSize", source, default=1.0)
    reveal = _number(data, "numTasksReveal", source, default=1.0)
    if reveal * team > MAX_REVEALED:
        raise ConfigError(
            f"{source}: 'numTasksReveal' {reveal:g} x teamSize {team} is "
            f"{reveal * team:,.0f} tasks revealed at once: at most "
            f"{MAX_REVEALED:,} (the kit's problems use 1 to 2)"
        )
    if not isinstance(data["delayConfig"], dict):
        raise ConfigError(f"{source}: 'delayConfig' must be an object (seed, minDelay, ...)")
    try:
        delays = DelayConfig.from_kit(data["delayConfig"], where=f"{source}: delayConfig")
    except TypeError as exc:
        raise ConfigError(f"{source}: delayConfig: {exc}") from None
    folder = source.parent
    map_file = folder / _text(data, "mapFile", source)
    rows, cols, blocked = _read_map(map_file)
    starts = _read_starts(folder / _text(data, "agentFile", source), team, blocked, cols)
    tasks = _read_tasks(folder / _text(data, "taskFile", source), blocked, cols)
    return Problem(
        source,
        map_file.name,
        rows,
        cols,
        blocked,
        starts,
        tasks,
        reveal,
        counter,
        size,
        delays,
        str(data.get("version", "")),
    )


def _text(data: dict[str, Any], key: str, source: Path) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{source}: '{key}' must be a file name relative to {source.parent}")
    return value


def _whole(
    data: dict[str, Any], key: str, source: Path, least: int, default: int | None = None
) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{source}: '{key}' must be a whole number >= {least}, got {value!r}")
    return value


def _number(data: dict[str, Any], key: str, source: Path, default: float) -> float:
    value = data.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not value > 0
        or (not math.isfinite(value))
    ):
        raise ConfigError(f"{source}: '{key}' must be a finite number > 0, got {value!r}")
    return float(value)


def _read_map(file: Path) -> tuple[int, int, np.ndarray]:
    if not file.is_file():
        raise ConfigError(f"map file not found: {file}")
    lines = file.read_text(errors="replace").splitlines()
    header: dict[str, str] = {}
    first = None
    for k, line in enumerate(lines[:10]):
        words = line.split()
        if words == ["map"]:
            first = k + 1
            break
        if len(words) == 2:
            header[words[0]] = words[1]
    try:
        rows, cols = int(header["height"]), int(header["width"])
    except (KeyError, ValueError):
        first = None
    if first is None or rows <= 0 or cols <= 0:
        raise ConfigError(
            f"{file}: not a grid map (expected 'type octile', 'height H', "
            "'width W', 'map', then H rows of W cells)"
        )
    grid = lines[first : first + rows]
    if len(grid) < rows:
        raise ConfigError(f"{file}: the header says height {rows}, there are {len(grid)} rows")
    blocked = np.zeros(rows * cols, dtype=np.uint8)
    for r, line in enumerate(grid):
        line = line.rstrip("\r")
        if len(line) < cols:
            raise ConfigError(
                f"{file} line {first + r + 1}: row {r} has {len(line)} cells, the "
                f"header says width {cols}"
            )
        cells = np.frombuffer(line[:cols].encode("latin-1", "replace"), np.uint8)
        blocked[r * cols : (r + 1) * cols] = np.isin(
            cells, np.frombuffer(OBSTACLES.encode(), np.uint8)
        )
    return rows, cols, blocked


def _numbers(file: Path, what: str) -> tuple[int, list[tuple[int, str]]]:
    """(count, [(line number, line)]) of an agents or tasks file, comments skipped."""
    if not file.is_file():
        raise ConfigError(f"{what} file not found: {file}")
    lines = [
        (k + 1, line.strip())
        for k, line in enumerate(_read_text(file, f"the {what}s").splitlines())
    ]
    lines = [(k, line) for k, line in lines if line and not line.startswith("#")]
    if not lines or not lines[0][1].isdigit():
        raise ConfigError(f"{file}: the first line must be the number of {what}s")
    return int(lines[0][1]), lines[1:]


def _read_text(file: Path, what: str) -> str:
    """A kit file's text (UTF-8, as the kit reads it); a clear error when it is not text."""
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = file.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{file} line {line}: {what} must be UTF-8 text (byte "
            f"{exc.object[exc.start]:#04x} at offset {exc.start} is not)"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read {what} ({exc.strerror or exc})") from None


def _location(file: Path, line: int, text: str, blocked: np.ndarray, cols: int) -> int:
    try:
        where = int(text)
    except ValueError:
        raise ConfigError(
            f"{file} line {line}: '{text}' is not a location (row * width + column)"
        ) from None
    if not 0 <= where < len(blocked):
        raise ConfigError(
            f"{file} line {line}: location {where} is outside the map "
            f"({len(blocked) // cols} x {cols} cells)"
        )
    if blocked[where]:
        raise ConfigError(
            f"{file} line {line}: location {where} (row {where // cols}, column "
            f"{where % cols}) is an obstacle"
        )
    return where


def _read_starts(file: Path, team: int, blocked: np.ndarray, cols: int) -> np.ndarray:
    count, lines = _numbers(file, "agent")
    if min(count, len(lines)) < team:
        raise ConfigError(
            f"{file}: {min(count, len(lines))} starts for a teamSize of {team}: "
            "lower teamSize or add starts"
        )
    starts = [_location(file, k, text, blocked, cols) for k, text in lines[:team]]
    return np.asarray(starts, dtype=np.int64)


def _read_tasks(file: Path, blocked: np.ndarray, cols: int) -> list[tuple[int, ...]]:
    count, lines = _numbers(file, "task")
    if len(lines) < count:
        raise ConfigError(f"{file}: the first line says {count} tasks, there are {len(lines)}")
    tasks = []
    for k, text in lines[:count]:
        errands = [part.strip() for part in text.split(",") if part.strip()]
        if not errands:
            raise ConfigError(f"{file} line {k}: a task needs at least one location")
        tasks.append(tuple(_location(file, k, e, blocked, cols) for e in errands))
    if not tasks:
        raise ConfigError(f"{file}: no tasks")
    return tasks
