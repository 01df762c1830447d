"""Building files: nothing a file says is accepted when it cannot be right, or dropped without a
word. Each bad building is the good one of `test_building_levels` with one thing wrong; the
error names the building file, its line and the key, and says what to do."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fleetsim import ConfigError
from fleetsim.scenario import build, load_scenario
from fleetsim.site import load_rmf_building

from .drawn import building, to_pixels


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "tower.building.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def lift(data: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = data["lifts"]["Lift1"]
    return spec


def negative_width(d: dict[str, Any]) -> None:
    lift(d)["width"] = -2.0


def no_such_floor(d: dict[str, Any]) -> None:
    lift(d)["initial_floor_name"] = "L9"


def missing_lift_door(d: dict[str, Any]) -> None:
    lift(d)["level_doors"]["L2"] = ["door7"]


def unknown_door_type(d: dict[str, Any]) -> None:
    d["levels"]["L2"]["doors"][0][2]["type"] = [1, "slidng"]


def zero_width_door(d: dict[str, Any]) -> None:
    d["levels"]["L2"]["doors"][0][1] = d["levels"]["L2"]["doors"][0][0]


def unknown_lift_door_type(d: dict[str, Any]) -> None:
    lift(d)["doors"]["door1"]["door_type"] = 9


BAD: list[tuple[Callable[[dict[str, Any]], None], str, str]] = [
    (negative_width, "lifts.Lift1.width", r"the cabin's width must be > 0 m"),
    (no_such_floor, "lifts.Lift1.initial_floor_name", r"'L9' is not a level lift Lift1 serves"),
    (
        missing_lift_door,
        "lifts.Lift1.level_doors.L2",
        r"lift Lift1 has no door 'door7' \(its doors",
    ),
    (unknown_door_type, "levels.L2.doors[0][2].type", r"type 'slidng': did you mean 'sliding'\?"),
    (zero_width_door, "levels.L2.doors[0]", r"door 'L2_door' has no width"),
    (unknown_lift_door_type, "lifts.Lift1.doors.door1.door_type", r"9 is not a door type"),
]


@pytest.mark.parametrize(("spoil", "key", "said"), BAD, ids=[b[0].__name__ for b in BAD])
def test_a_bad_building_names_the_file_line_and_key(
    tmp_path: Path, spoil: Callable[[dict[str, Any]], None], key: str, said: str
) -> None:
    data = building()
    spoil(data)
    path = write(tmp_path, data)
    with pytest.raises(ConfigError, match=said) as caught:
        load_rmf_building(path)
    message = str(caught.value)
    found = re.match(rf"{re.escape(str(path))} line (\d+): {re.escape(key)}: ", message)
    assert found, message
    last = re.split(r"[.\[\]]+", key.rstrip("]"))[-1]
    line = path.read_text().splitlines()[int(found.group(1)) - 1]
    assert line.lstrip().startswith(("-", f"{last}:")), (line, key)  # the line holds that key


def test_two_doors_of_one_name_are_reported_at_the_second_doors_line(tmp_path: Path) -> None:
    data = building()
    data["levels"]["L3"]["doors"][0][2]["name"] = [1, "L2_door"]
    path = write(tmp_path, data)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"site: {{file: {path.name}}}\nrobots:\n"
        "  - {name: r, model: mobile_robot, start: lobby}\n"
    )
    with pytest.raises(ConfigError) as caught:
        build(load_scenario(scenario))
    message = str(caught.value)
    assert "a second door named 'L2_door'" in message
    assert f"{path} line " in message and "levels.L3.doors[0]" in message, message
    assert "levels.L2.doors[0]" in message  # where the first one is


def test_what_a_building_has_that_is_not_simulated_is_said(tmp_path: Path) -> None:
    data = building()
    data["escalators"] = {"E1": {"from": "L1", "to": "L2"}}
    data["levels"]["L2"]["lanes"][0][2]["orientation"] = [1, "forward"]
    site = load_rmf_building(write(tmp_path, data))
    assert any(note.startswith("escalators") for note in site.ignored), site.ignored
    assert any("level L2: lane orientation on 1 lane" in note for note in site.ignored)


def test_a_fiducial_far_from_the_others_fit_is_said_with_its_residual(tmp_path: Path) -> None:
    good = load_rmf_building(write(tmp_path, building()))
    assert not any("fiducial" in note for note in good.ignored), good.ignored
    data = copy.deepcopy(building())
    marks = data["levels"]["L2"]["fiducials"]
    east = next(m for m in marks if m[2] == "east")
    east[:2] = to_pixels("L2", (17.0, -3.0))  # drawn 3 m from where it is
    site = load_rmf_building(write(tmp_path, data))
    said = [note for note in site.ignored if "fiducial" in note]
    assert len(said) == 1 and "level L2: fiducial 'east'" in said[0], site.ignored
    metres = float(re.search(r"is ([\d.]+) m from", said[0]).group(1))  # type: ignore[union-attr]
    assert metres == pytest.approx(3.0, abs=0.05)  # (where the other two put it)
