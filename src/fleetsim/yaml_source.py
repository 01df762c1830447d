"""YAML files read safely, with the lines of their keys for messages: nesting and alias
expansion bounded (a file nested 20,000 deep, or a "billion laughs", is an error naming the
line, not a RecursionError or a machine out of memory), duplicate keys refused, and
`line_of(text, keys)` for `file line N: key.path: message`."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from fleetsim.errors import ConfigError

MAX_VALUES = 1_000_000  # values after expanding anchors and aliases ("billion laughs")
MAX_DEPTH = 64  # nesting of mappings and lists


_KEY_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_bounded(text: str, path: Path | str, error: type[ConfigError] = ConfigError) -> Any:
    """The YAML document in `text` (of the file `path`), or `error` naming the line."""
    deep = _too_deep_at(text)  # before PyYAML, which is slow on such input
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        raise error(
            f"{path} line {line}: nested deeper than {MAX_DEPTH} levels (brackets "
            f"[ and {{ inside each other)"
        )
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None:
            _check_node(node, Path(path), error)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark is not None else ""
        raise error(f"{path}{at}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply (at most {MAX_DEPTH} levels)") from None


def _check_node(root: yaml.Node, path: Path, error: type[ConfigError]) -> None:
    """Depth, expanded size (aliases count every time they are used) and duplicate keys."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, children_done = stack.pop()
        if id(node) in sizes:  # an alias of a node already measured
            continue
        if depth > MAX_DEPTH:
            line = node.start_mark.line + 1
            raise error(f"{path} line {line}: nested deeper than {MAX_DEPTH} levels")
        children = _children(node)
        if children_done or not children:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_VALUES:
                line = node.start_mark.line + 1
                raise error(
                    f"{path} line {line}: expands to more than {MAX_VALUES:,} values "
                    "(YAML anchors and aliases repeated); write the values out or use a grid"
                )
            continue
        if isinstance(node, yaml.MappingNode):
            _no_duplicate_keys(node, path, error)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if id(c) not in sizes)


def _too_deep_at(text: str) -> int | None:
    """Where [ and { brackets first nest deeper than MAX_DEPTH (a character index), if they do
    (an upper bound: brackets in strings count too)."""
    chars = np.frombuffer(text.encode("utf-8", errors="replace"), dtype=np.uint8)
    step = np.isin(chars, (ord("["), ord("{"))).astype(np.int32)
    step -= np.isin(chars, (ord("]"), ord("}")))
    over = np.flatnonzero(np.cumsum(step) > MAX_DEPTH)
    if not over.size:
        return None
    return len(chars[: int(over[0])].tobytes().decode("utf-8", errors="replace"))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _no_duplicate_keys(node: yaml.MappingNode, path: Path, error: type[ConfigError]) -> None:
    seen: dict[Any, int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.value == "<<":
            continue
        line = key.start_mark.line + 1
        if key.value in seen:
            raise error(
                f"{path} line {line}: duplicate key '{key.value}' (first on line "
                f"{seen[key.value]}); YAML would silently keep only the last one"
            )
        seen[key.value] = line


def line_of(text: str, keys: typing.Sequence[str | int]) -> int | None:
    """The line (1-based) of the value at `keys` in YAML `text`, or None."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == key), None)
            if match is None:
                return line
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def parse_key_path(where: str) -> list[str | int]:
    """'robots[2].grid.spacing' -> ['robots', 2, 'grid', 'spacing'] (the inverse of
    `key_path`)."""
    return [name if name else int(index) for name, index in _KEY_TOKEN.findall(where)]


def key_path(keys: typing.Sequence[str | int]) -> str:
    """('robots', 2, 'grid', 'spacing') -> 'robots[2].grid.spacing'."""
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out
