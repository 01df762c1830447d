"""A failing run, kept: a scenario file that holds everything `fleetsim run` needs to make the
same run again, wherever it is written. The seed and the duration are set, the faults are the
ones that happened, written out as fixed events (no random process, no delay draws), and every
file the scenario names by a relative path (a site, a building, a task file, a model, a
plugin's module) is named by its absolute path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from fleetsim.scenario import load_scenario

HEADER = "# Kept by `fleetsim fuzz`: `fleetsim run {name}` makes this run again.\n"


def kept_scenario(
    scenario: str,
    overrides: list[str] | tuple[str, ...],
    seed: int | None,
    duration: float | None,
    events: list[dict[str, Any]],
) -> dict[str, Any]:
    """The scenario `scenario` with `overrides`, `seed` and `duration` applied and its faults
    replaced by `events`, as plain data."""
    loaded = load_scenario(scenario, overrides)
    data = copy.deepcopy(loaded.raw)
    simulation = data.setdefault("simulation", {})
    if seed is not None:
        simulation["seed"] = seed
    if duration is not None:
        simulation["duration"] = duration
    data["faults"] = {"events": events}
    _absolute(data, loaded.path.parent)
    return data


def write_kept(data: dict[str, Any], path: Path, note: str = "") -> Path:
    """Write a kept scenario (with a header saying how to run it) to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = HEADER.format(name=path.name) + "".join(f"# {line}\n" for line in note.splitlines())
    path.write_text(head + yaml.safe_dump(data, sort_keys=False, width=100))
    return path


def _absolute(data: dict[str, Any], folder: Path) -> None:
    """Relative file paths of the scenario, made absolute (when the file is in `folder`)."""

    def fix(value: Any) -> Any:
        if isinstance(value, str) and value and not Path(value).is_absolute():
            candidate = folder / value
            if candidate.exists():
                return str(candidate.resolve())
        return value

    site = data.get("site")
    if isinstance(site, dict):
        for key in ("file",):
            if key in site:
                site[key] = fix(site[key])
        graph = site.get("graph")
        if isinstance(graph, dict) and "file" in graph:
            graph["file"] = fix(graph["file"])
    for item in (data.get("environment") or {}).get("files", []) or []:
        if isinstance(item, dict) and "path" in item:
            item["path"] = fix(item["path"])
    plugins = list(data.get("plugins") or [])
    for robot in data.get("robots") or []:
        if isinstance(robot, dict):
            if "model" in robot:
                robot["model"] = fix(robot["model"])
            plugins += list(robot.get("plugins") or [])
    for plugin in plugins:
        if not isinstance(plugin, dict):
            continue
        cls = plugin.get("class")
        if isinstance(cls, str) and ":" in cls:
            module, _, attr = cls.rpartition(":")
            file = folder / (module.replace(".", "/") + ".py")
            if not module.endswith(".py") and file.is_file():
                plugin["class"] = f"{file.resolve()}:{attr}"
        tasks = (plugin.get("params") or {}).get("tasks")
        if isinstance(tasks, dict) and "file" in tasks:
            tasks["file"] = fix(tasks["file"])
