"""A sweep's plan: the grid of `--set KEY=V1,V2,...` values times the seeds, checked before
any run starts.

Values are read as YAML, like `fleetsim run --set`, and split at commas outside brackets and
quotes (`--set goal=[1,2],[3,4]` is two values). `--seeds` takes `1-20`, `1,5,9` or `7`.
Every combination is loaded and validated against the schema here, so an unknown key, a value
of the wrong type or an empty list is an error naming the key before a single run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleetsim.errors import ConfigError
from fleetsim.scenario.loader import load_scenario, scenario_path

MAX_RUNS = 1_000_000
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: a scenario with overrides and a seed."""

    scenario: str  # the scenario file's path
    overrides: tuple[str, ...]  # key=value, the fixed ones then the swept ones
    seed: int | None  # None: the scenario's
    values: dict[str, Any] = field(hash=False)  # the swept keys' values, for the results row
    duration: float | None = None
    details: str | None = None  # a folder for this run's full results file, when asked

    @property
    def run_id(self) -> str:
        """Stable over sweeps: the same scenario, overrides, seed and duration, the same id."""
        what = json.dumps(
            [Path(self.scenario).name, list(self.overrides), self.seed, self.duration]
        )
        return hashlib.sha1(what.encode()).hexdigest()[:16]


@dataclass
class Plan:
    """A sweep's plan: the scenario, the swept keys and values, fixed overrides and the seeds."""

    scenario: Path
    swept: dict[str, list[Any]]  # key -> its values, in the order given
    fixed: list[str]
    seeds: list[int | None]  # None: the scenario's own seed (or a swept simulation.seed)
    duration: float | None = None

    @property
    def combinations(self) -> list[dict[str, Any]]:
        """Every combination of the swept values, in order."""
        keys = list(self.swept)
        return [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*self.swept.values())
        ]

    def runs(self, details: Path | None = None) -> list[RunSpec]:
        """Every run: each combination with each seed (with a details file under `details`)."""
        out = []
        for combination in self.combinations:
            swept = [f"{k}={_text(v)}" for k, v in combination.items()]
            for seed in self.seeds:
                out.append(
                    RunSpec(
                        str(self.scenario),
                        (*self.fixed, *swept),
                        seed,
                        combination,
                        self.duration,
                        str(details) if details else None,
                    )
                )
        return out


def split_values(text: str) -> list[str]:
    """`a,b,[1,2],"x,y"` -> ['a', 'b', '[1,2]', '"x,y"']: commas outside brackets and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def parse_sets(items: list[str]) -> tuple[dict[str, list[Any]], list[str]]:
    """`--set` items: the swept keys with their values, and the fixed `key=value`s (one value)."""
    swept: dict[str, list[Any]] = {}
    fixed: list[str] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(
                f"--set {item!r}: expected KEY=V1,V2,... (for example "
                "robots[0].start.random=10,20,40)"
            )
        if key in swept or any(f.partition("=")[0] == key for f in fixed):
            raise ConfigError(f"--set {key}: given twice; list all its values in one --set")
        texts = split_values(text)
        if not any(texts):
            raise ConfigError(
                f"--set {key}: no values: give one or more, comma-separated ({key}=10,20,40)"
            )
        if "" in texts:
            raise ConfigError(f"--set {key}={text}: an empty value in the list")
        values = [_value(key, t) for t in texts]
        if len(values) == 1:
            fixed.append(f"{key}={texts[0]}")
        elif len({_text(v) for v in values}) < len(values):
            raise ConfigError(f"--set {key}: a value is listed twice ({text})")
        else:
            swept[key] = values
    return swept, fixed


def parse_seeds(text: str) -> list[int]:
    """`1-20`, `1,5,9`, `7`, or a mix (`1-3,10`): distinct seeds, in the order given."""
    seeds: list[int] = []
    seen: set[int] = set()  # (a set: a million seeds are checked in a blink, not minutes)
    for part in (p.strip() for p in text.split(",")):
        low, dash, high = part.partition("-")
        try:
            a = int(low)
            b = int(high) if dash else a
        except ValueError:
            raise ConfigError(
                f"--seeds {text}: '{part}' is not a seed or a range like 1-20"
            ) from None
        if b < a:
            raise ConfigError(f"--seeds {text}: the range {part} runs backwards; write {b}-{a}")
        if a < 0 or b > MAX_SEED:
            raise ConfigError(f"--seeds {text}: seeds are 0 to {MAX_SEED}")
        if b - a >= MAX_RUNS or len(seeds) + b - a >= MAX_RUNS:
            raise ConfigError(f"--seeds {text}: more than {MAX_RUNS:,} seeds")
        fresh = [s for s in range(a, b + 1) if s not in seen]
        seen.update(fresh)
        seeds.extend(fresh)
    return seeds


def make_plan(
    scenario: str, sets: list[str], seeds: str | None, duration: float | None = None
) -> Plan:
    """The plan, with every combination checked against the scenario schema."""
    path = scenario_path(scenario)
    swept, fixed = parse_sets(sets)
    seed_list: list[int | None] = list(parse_seeds(seeds)) if seeds else [None]
    if duration is not None and not duration > 0:
        raise ConfigError(f"--duration {duration}: expected simulated seconds > 0")
    plan = Plan(path.resolve(), swept, fixed, seed_list, duration)
    total = len(plan.combinations) * len(seed_list)
    if total > MAX_RUNS:
        raise ConfigError(f"the sweep has {total:,} runs: at most {MAX_RUNS:,}")
    for combination in plan.combinations:  # an unknown key or a wrong type: said now
        overrides = [*fixed, *(f"{k}={_text(v)}" for k, v in combination.items())]
        try:
            load_scenario(path, overrides)
        except ConfigError as exc:
            given = ", ".join(f"{k}={_text(v)}" for k, v in combination.items())
            raise ConfigError(f"{exc}\n(with {given or 'the fixed --set values'})") from None
    return plan


def _value(key: str, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {key}: '{text}' is not a value: {exc}") from None


def _text(value: Any) -> str:
    """A value as `--set` text that reads back as the same value."""
    if isinstance(value, str):
        return json.dumps(value) if yaml.safe_load(value) != value else value
    return json.dumps(value)
