"""What a fuzz is given, checked before the first run: the `--faults` section (read as scenario
files are, bounded; its errors named at the faults file's own line and key), the scenario with
those faults (built once, as `fleetsim validate` does, so that a fault naming a robot, door or
lane the run does not have stops the fuzz at once instead of making every run "go wrong"), and
the results file (`--out`: somewhere it can be written)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.outputs import check_writable
from fleetsim.scenario import LoadedScenario, build
from fleetsim.scenario.body_count import body_counts
from fleetsim.yaml_source import line_of, parse_bounded, parse_key_path

CHECK_IN_FULL = 10_000  # bodies: larger scenarios are checked by their first run
_KEY = re.compile(r"^(?P<head>.*?): (?P<key>faults(?:[.\[][^:\s]*)?): (?P<rest>.*)$", re.DOTALL)


@dataclass(frozen=True)
class FaultsSource:
    """Where `--faults` came from: its file (None: inline), its text, and whether the section
    sits under a `faults:` key there."""

    path: Path | None
    text: str
    wrapped: bool


def read_faults(text: str) -> tuple[dict[str, Any], FaultsSource]:
    """`--faults`: a YAML file holding a `faults:` section (or the section itself), or the
    section as inline YAML; read with the bounds scenario files have (nesting, aliases)."""
    path = Path(text)
    is_file = len(text) < 4096 and "\n" not in text and path.is_file()
    if is_file:
        try:
            source = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--faults {path}: cannot read it ({exc})") from None
    else:
        source = text
    data = parse_bounded(source, path if is_file else "--faults")
    wrapped = isinstance(data, dict) and "faults" in data and len(data) == 1
    if wrapped:
        data = data["faults"]
    if not isinstance(data, dict):
        where = f"--faults {path}" if is_file else "--faults"
        raise ConfigError(f"{where}: expected a faults: section (robots, site, delays, events)")
    return data, FaultsSource(path if is_file else None, source, wrapped)


def in_faults_file(exc: ConfigError, source: FaultsSource | None) -> ConfigError:
    """`exc` about the `faults` section, said at the faults file's line and key (when the
    faults came from a file; else `exc` as it is)."""
    found = _KEY.match(str(exc))
    if source is None or source.path is None or found is None:
        return exc
    key = found.group("key")
    keys = parse_key_path(key)
    keys = keys if source.wrapped else keys[1:]
    line = line_of(source.text, keys)
    shown = key if source.wrapped else key.removeprefix("faults").lstrip(".")
    at = f" line {line}" if line else ""
    return type(exc)(f"{source.path}{at}: {shown or 'faults'}: {found.group('rest')}")


def check_once(loaded: LoadedScenario, duration: float | None, seed: int) -> None:
    """Build the scenario once with its faults (as `fleetsim validate` does), so that what no
    run could do is an error now; scenarios of more than `CHECK_IN_FULL` bodies are left to
    their runs."""
    if sum(n for _, n in body_counts(loaded)) > CHECK_IN_FULL:
        return
    with build(loaded, gui=False, target_rtf=0.0, duration=duration, seed=seed).sim:
        pass


def check_out(out: Path) -> None:
    """`--out` can be written: a file (not a folder) in a folder that exists and is writable."""
    check_writable(out, "--out")
