"""Reading scenario files: bundled names or paths, `--set` overrides, errors with key path and line.

Errors read like `warehouse.yaml line 12: robots[2].grid.spacing: unknown key 'spacng': did you
mean 'spacing'?`.
"""

from __future__ import annotations

import itertools
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import yaml

from fleetsim.errors import AssetNotFoundError, ConfigError, closest
from fleetsim.scenario.schema import Scenario
from fleetsim.yaml_source import key_path, parse_bounded, parse_key_path
from fleetsim.yaml_source import line_of as _line_of

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "scenarios"
MAX_REPORTED_ERRORS = 5
MAX_FILE_BYTES = 10 * 1024 * 1024  # a scenario is a page of YAML, not a data set
MAX_SHOWN_CHARS = 80  # echoed values in messages are cut to this


class ScenarioError(ConfigError):
    """A scenario file is wrong; the message names the file, the key path and the fix."""


@dataclass
class LoadedScenario:
    """A scenario read and checked: its spec, file, text and overrides."""

    scenario: Scenario
    path: Path
    raw: dict[str, Any]
    text: str = ""

    def line_of(self, where: str) -> int | None:
        """The line of a key path such as "robots[0].plugins[1]" in the file, if found."""
        keys = parse_key_path(where)
        return _line_of(self.text, keys)

    def at(self, where: str) -> str:
        """`file line N: where` for messages."""
        line = self.line_of(where)
        return f"{self.path}{f' line {line}' if line else ''}: {where}"


def bundled_scenarios() -> dict[str, Path]:
    """Scenarios shipped with fleetsim, by name (not the building files they use)."""
    return {
        p.stem: p
        for p in sorted(BUNDLED_DIR.glob("*.yaml"))
        if not p.name.endswith(".building.yaml")
    }


def scenario_path(name_or_path: str | Path) -> Path:
    """A scenario file: an existing path, or the name of a bundled scenario."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    bundled = bundled_scenarios()
    if str(name_or_path) in bundled:
        return bundled[str(name_or_path)]
    guess = closest(str(name_or_path), bundled)
    hint = f"did you mean '{guess}'? " if guess else ""
    raise AssetNotFoundError(
        f"no scenario file '{name_or_path}': {hint}bundled scenarios: {', '.join(bundled)} "
        "(`fleetsim examples` lists them)"
    )


def load_scenario(name_or_path: str | Path, overrides: typing.Sequence[str] = ()) -> LoadedScenario:
    """Read, apply `key.path=value` overrides, and validate a scenario."""
    path = scenario_path(name_or_path)
    text = read_text(path)
    data = parse_yaml(text, path)
    for item in overrides:
        apply_override(data, item)
    try:
        scenario = Scenario.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ScenarioError(describe(exc, path, text, data)) from None
    if not (scenario.robots or scenario.objects or scenario.environment.files):
        raise ScenarioError(
            f"{path}: the scenario defines nothing to simulate: add robots, objects or "
            "environment files"
        )
    return LoadedScenario(scenario, path, data, text)


def read_text(path: Path) -> str:
    """The file as text: bounded in size, and not a binary file."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{path}: {size:,} bytes is too large for a scenario file (limit {MAX_FILE_BYTES:,})"
        )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            f"{path}: not a text file (byte {exc.start} is not UTF-8); a scenario is YAML text"
        ) from None
    if "\x00" in text:
        raise ScenarioError(f"{path}: not a text file (it contains NUL bytes)")
    return text


def parse_yaml(text: str, path: Path) -> dict[str, Any]:
    """Parse YAML safely: bounded nesting and alias expansion, no duplicate keys."""
    data = parse_bounded(text, path, ScenarioError)
    if data is None:
        raise ScenarioError(
            f"{path}: the file is empty; a scenario needs at least robots or objects "
            "(fleetsim examples copy warehouse gives a starting point)"
        )
    if not isinstance(data, dict):
        raise ScenarioError(
            f"{path}: a scenario is a mapping with keys such as simulation, robots, objects"
        )
    return data


# -- overrides ----------------------------------------------------------------------------------


def apply_override(data: dict[str, Any], item: str) -> None:
    """Set `key.path[0].leaf=value` in `data`; the value is read as YAML (numbers, lists, ...)."""
    key, sep, raw_value = item.partition("=")
    if not sep or not key:
        raise ScenarioError(
            f"--set needs key=value (for example simulation.target_rtf=2), got '{item}'"
        )
    steps = parse_key_path(key)
    node: Any = data
    for step, following in itertools.pairwise(steps):
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise ScenarioError(f"--set {key}: no item [{step}] there")
            node = node[step]
        else:
            if not isinstance(node, dict):
                raise ScenarioError(f"--set {key}: '{step}' is not inside a mapping")
            node = node.setdefault(step, [] if isinstance(following, int) else {})
    last = steps[-1]
    value = yaml.safe_load(raw_value) if raw_value.strip() else None
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ScenarioError(f"--set {key}: no item [{last}] there")
        node[last] = value
    else:
        if not isinstance(node, dict):
            raise ScenarioError(f"--set {key}: '{last}' is not inside a mapping")
        node[last] = value


# -- error messages -----------------------------------------------------------------------------


def describe(exc: pydantic.ValidationError, path: Path, text: str, data: dict[str, Any]) -> str:
    """A validation error as `file line N: key.path: message` lines, with the closest valid key for
    a typo."""
    lines = []
    errors = exc.errors()
    for err in errors[:MAX_REPORTED_ERRORS]:
        keys = _data_path(err["loc"], data)
        where = key_path(keys)
        line = _line_of(text, keys)
        at = f"{path} line {line}" if line else str(path)
        if err["type"] == "extra_forbidden":
            unknown = str(keys[-1])
            valid = valid_keys(keys[:-1], data)
            guess = closest(unknown, valid)
            hint = (
                f"did you mean '{guess}'?" if guess else f"valid keys: {', '.join(sorted(valid))}"
            )
            lines.append(f"{at}: {where}: unknown key '{unknown}': {hint}")
        else:
            lines.append(f"{at}: {where or '(top level)'}: {err['msg']}{given(err)}")
    more = len(errors) - MAX_REPORTED_ERRORS
    if more > 0:
        lines.append(f"... and {more} more")
    return "\n".join(lines)


def given(err: Any) -> str:
    """ " (got <value>)" for a pydantic error on a plain value ("" for mappings and lists)."""
    value = err.get("input")
    return "" if "input" not in err or isinstance(value, dict | list) else f" (got {shown(value)})"


def shown(value: Any) -> str:
    """`repr(value)`, cut to MAX_SHOWN_CHARS for messages."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 3] + "..."


def _data_path(loc: tuple[Any, ...], data: Any) -> list[str | int]:
    """The error location as keys of the file (dropping pydantic's union tags)."""
    keys: list[str | int] = []
    node = data
    for step in loc:
        key = "class" if step == "class_" else step
        if _has(node, key):
            keys.append(key)
            node = node[key]
        elif isinstance(step, int) or not isinstance(node, dict | list):
            keys.append(step)  # past the data (a missing key): keep it for the message
            node = None
    return keys


def _has(node: Any, key: str | int) -> bool:
    if isinstance(key, int):
        return isinstance(node, list) and 0 <= key < len(node)
    return isinstance(node, dict) and key in node


def valid_keys(keys: typing.Sequence[str | int], data: Any, root: Any = Scenario) -> list[str]:
    """Field names of the model found at `keys` below `root` (the scenario format)."""
    model: Any = root
    node = data
    for key in keys:
        node = node[key] if _has(node, key) else None
        model = _inner(model, key, node)
        if model is None:
            return []
    if isinstance(model, type) and issubclass(model, pydantic.BaseModel):
        return [f.alias or name for name, f in model.model_fields.items()]
    return []


def _inner(model: Any, key: str | int, node: Any) -> Any:
    """The type one step down: a field's type for a key, the item type for a list index."""
    if isinstance(key, str):
        if not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
            return None
        field = model.model_fields.get("class_" if key == "class" else key)
        return None if field is None else _pick(field.annotation, node)
    return _pick(model, node)


def _pick(annotation: Any, node: Any) -> Any:
    """Unwrap Optional / list / Annotated / unions down to the model `node` is written for."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _pick(typing.get_args(annotation)[0], node)
    if origin in (list, tuple):
        return typing.get_args(annotation)[0]
    if origin in (typing.Union, types.UnionType):
        models = [
            a
            for a in typing.get_args(annotation)
            if isinstance(a, type) and issubclass(a, pydantic.BaseModel)
        ]
        tag = node.get("type") if isinstance(node, dict) else None
        for m in models:  # discriminated unions: the member whose `type` literal matches
            literal = m.model_fields.get("type")
            if (
                tag is not None
                and literal is not None
                and tag in typing.get_args(literal.annotation)
            ):
                return m
        lists = [a for a in typing.get_args(annotation) if typing.get_origin(a) is list]
        return models[0] if models else (_pick(lists[0], node) if lists else None)
    return annotation
