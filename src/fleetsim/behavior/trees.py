"""Reading a BehaviorTree.CPP v4 XML file (the format of Nav2 and Groot2) for the engine:
fleetsim's own nodes found and checked (a node or port we do not have, a required port
missing, a literal of the wrong kind: a `BehaviorError` naming the file and the line), then
each written as a `SubTree` of its own, line for line, so that BehaviorTree.CPP carries its
ports (the Python binding, behaviortreepy 0.1.4, cannot declare ports of Python nodes; a
SubTree's attributes are its ports, literals or `{blackboard}` entries alike).
"""

from __future__ import annotations

import difflib
import math
import xml.parsers.expat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fleetsim.errors import ConfigError

PREFIX = "fleetsim."  # the engine's name of a leaf `GoTo`: its SubTree "fleetsim.GoTo"
# attributes BehaviorTree.CPP gives every node (its name, pre- and post-conditions)
COMMON = frozenset({"name", "_skipIf", "_failureIf", "_successIf", "_while", "_onSuccess",
                    "_onFailure", "_onHalted", "_post"})  # fmt: skip


class BehaviorError(ConfigError):
    """A behaviour tree the engine cannot run as written: `source` the file (or "<text>"),
    `line` the line in it (0: the file as a whole)."""

    def __init__(self, source: str, line: int, message: str) -> None:
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.detail = source, line, message


@dataclass(frozen=True)
class Port:
    """A leaf's port: its kind ("text", "number", "list": names split at ';', or "output": a
    blackboard entry the leaf writes) and default (None: required)."""

    kind: str = "text"
    default: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class LeafSpec:
    """A fleetsim node as trees name it: `kind` "action" or "condition", for whom ("person",
    "robot" or "both"), its ports."""

    name: str
    kind: str
    who: str
    ports: Mapping[str, Port]
    doc: str


@dataclass
class Prepared:
    """A tree file made ready for the engine: its text with fleetsim's nodes as SubTrees, the
    tree to run, and the fleetsim nodes it uses."""

    source: str
    text: str
    main: str
    uses: set[str] = field(default_factory=set)


def read(xml: str | Path, leaves: Mapping[str, LeafSpec]) -> Prepared:
    """A tree file (a path, or XML text starting with '<') checked against `leaves` and made
    ready for the engine."""
    if isinstance(xml, Path) or not str(xml).lstrip().startswith("<"):
        path = Path(xml)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise BehaviorError(
                str(path), 0, f"cannot read the tree file ({exc.strerror})"
            ) from None
        source = str(path)
    else:
        raw, source = str(xml).encode(), "<text>"
    return _Reader(source, raw, leaves).prepare()


class _Reader:
    def __init__(self, source: str, raw: bytes, leaves: Mapping[str, LeafSpec]) -> None:
        self.source, self.raw, self.leaves = source, raw, leaves
        self.edits: list[tuple[int, bytes, bytes]] = []  # (byte index, old, new)
        self.trees: list[str] = []
        self.main: str | None = None
        self.uses: set[str] = set()
        self.stack: list[str] = []

    def prepare(self) -> Prepared:
        parser = xml.parsers.expat.ParserCreate()
        parser.StartElementHandler = lambda tag, attrs: self._start(parser, tag, attrs)
        parser.EndElementHandler = lambda tag: self._end(parser, tag)
        try:
            parser.Parse(self.raw, True)
        except xml.parsers.expat.ExpatError as exc:
            raise BehaviorError(self.source, exc.lineno, f"not well-formed XML ({exc})") from None
        if not self.trees:
            raise BehaviorError(self.source, 0, "no <BehaviorTree ID=...> in the file")
        main = self.main or (self.trees[0] if len(self.trees) == 1 else None)
        if main is None:
            names = ", ".join(self.trees)
            raise BehaviorError(self.source, 0, f"{len(self.trees)} trees ({names}): say which "
                                "to run with <root main_tree_to_execute=...>")  # fmt: skip
        if main not in self.trees:
            raise BehaviorError(self.source, 0, f"main_tree_to_execute {main!r} is not one of "
                                f"the file's trees ({', '.join(self.trees)})")  # fmt: skip
        out = bytearray(self.raw)
        for at, old, new in sorted(self.edits, reverse=True):
            assert out[at : at + len(old)] == old
            out[at : at + len(old)] = new
        return Prepared(self.source, out.decode(), main, self.uses)

    def _start(self, parser: xml.parsers.expat.XMLParserType, tag: str,
               attrs: dict[str, str]) -> None:  # fmt: skip
        line = parser.CurrentLineNumber
        self.stack.append(tag)
        if tag == "root" and "main_tree_to_execute" in attrs:
            self.main = attrs["main_tree_to_execute"]
        if tag == "BehaviorTree":
            if "ID" not in attrs:
                raise BehaviorError(self.source, line, "a <BehaviorTree> needs an ID")
            self.trees.append(attrs["ID"])
        if "TreeNodesModel" in self.stack or "BehaviorTree" not in self.stack[:-1]:
            return
        spec = self.leaves.get(tag)
        if spec is None:
            if tag.startswith(PREFIX):
                raise BehaviorError(self.source, line, f"<{tag}> is fleetsim's own: write "
                                    f"<{tag[len(PREFIX):]}>")  # fmt: skip
            near = difflib.get_close_matches(tag, list(self.leaves), n=1)
            if near and tag not in BUILT_IN:
                raise BehaviorError(self.source, line, f"no node <{tag}>: did you mean "
                                    f"<{near[0]}>?")  # fmt: skip
            return
        self._check(spec, attrs, line)
        self.uses.add(tag)
        at = parser.CurrentByteIndex
        self.edits.append((at, f"<{tag}".encode(), f'<SubTree ID="{PREFIX}{tag}"'.encode()))

    def _end(self, parser: xml.parsers.expat.XMLParserType, tag: str) -> None:
        self.stack.pop()
        at = parser.CurrentByteIndex
        close = f"</{tag}".encode()
        if tag in self.leaves and self.raw[at : at + len(close)] == close:
            self.edits.append((at, close, b"</SubTree"))

    def _check(self, spec: LeafSpec, attrs: dict[str, str], line: int) -> None:
        for name, value in attrs.items():
            port = spec.ports.get(name)
            if port is None:
                if name in COMMON:
                    continue
                near = difflib.get_close_matches(name, list(spec.ports), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                known = ", ".join(spec.ports) or "none"
                raise BehaviorError(self.source, line, f"<{spec.name}> has no port {name!r}"
                                    f"{hint}; its ports: {known}")  # fmt: skip
            entry = value.startswith("{") and value.endswith("}")
            if port.kind == "output" and not entry:
                raise BehaviorError(self.source, line, f"<{spec.name} {name}={value!r}>: an "
                                    "output: name a blackboard entry, {key}")  # fmt: skip
            if not entry:
                problem = literal_problem(port, value)
                if problem:
                    raise BehaviorError(self.source, line, f"<{spec.name} {name}={value!r}>: "
                                        f"{problem}")  # fmt: skip
        missing = [n for n, p in spec.ports.items() if p.default is None and n not in attrs]
        if missing:
            raise BehaviorError(self.source, line, f"<{spec.name}> needs "
                                f"{', '.join(missing)}")  # fmt: skip


def literal_problem(port: Port, value: str) -> str:
    """What is wrong with `value` for `port` ("" when nothing)."""
    if port.kind == "number":
        try:
            number = float(value)
        except ValueError:
            return "a number is wanted"
        if not math.isfinite(number) or number < 0:
            return "a finite number >= 0 is wanted"
    if port.kind == "list" and not [v for v in value.split(";") if v.strip()]:
        return "one or more names, separated by ';', are wanted"
    if port.kind == "text" and not value.strip():
        return "a name is wanted"
    return ""


# BehaviorTree.CPP v4's own nodes (no "did you mean" toward ours for these)
BUILT_IN = frozenset({
    "Sequence", "SequenceWithMemory", "ReactiveSequence", "Fallback", "ReactiveFallback",
    "Parallel", "ParallelAll", "IfThenElse", "WhileDoElse", "Switch2", "Switch3", "Switch4",
    "Switch5", "Switch6", "Inverter", "ForceSuccess", "ForceFailure", "Repeat",
    "RetryUntilSuccessful", "KeepRunningUntilFailure", "Timeout", "Delay", "RunOnce",
    "Precondition", "Script", "ScriptCondition", "SetBlackboard", "UnsetBlackboard",
    "AlwaysSuccess", "AlwaysFailure", "Sleep", "SubTree", "WasEntryUpdated", "SkipUnlessUpdated",
    "WaitValueUpdate", "LoopInt", "LoopDouble", "LoopString", "LoopBool", "TestNode",
})  # fmt: skip
