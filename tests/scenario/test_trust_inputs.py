"""Hostile and careless inputs to the surfaces added since the first trust round (buildings,
site graphs): `fleetsim validate` says what is wrong with file, line and key, exits 2, and
never prints a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import fleetsim

ROBOT = "robots: [{model: mobile_robot, pose: {position: [0, 0, 0]}}]\n"
VERTICES = "    vertices:\n      - [0, 0, 0, a]\n      - [1, 0, 0, b]\n"
LANES = "    lanes:\n      - [0, 1, {bidirectional: [4, true]}]\n"


def building(body: str) -> str:
    return f"coordinate_system: cartesian_meters\nlevels:\n  L1:\n{body}"


CASES = [
    ("a vertex coordinate that is a word",
     building("    vertices:\n      - [left, 0, 0, a]\n      - [1, 0, 0, b]\n" + LANES),
     "b.building.yaml line 5: levels.L1.vertices[0]: expected [x, y, z, name, {params}]"),
    ("a vertex with one number",
     building("    vertices:\n      - [0]\n      - [1, 0, 0, b]\n" + LANES),
     "b.building.yaml line 5: levels.L1.vertices[0]"),
    ("lanes that are a number", building(VERTICES + "    lanes: 5\n"),
     "b.building.yaml line 7: levels.L1.lanes: expected a list, got int 5"),
    ("a lane that is not a pair", building(VERTICES + "    lanes:\n      - 7\n"),
     "b.building.yaml line 8: levels.L1.lanes[0]: expected [vertex, vertex, {params}]"),
    ("a building nested 20,000 deep", "levels: " + "[" * 20000 + "]" * 20000 + "\n",
     "b.building.yaml: nested deeper than 64 levels"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "text", "said"), CASES, ids=[c[0] for c in CASES])
def test_bad_buildings_are_clear_errors(tmp_path: Path, what: str, text: str, said: str) -> None:
    (tmp_path / "b.building.yaml").write_text(text)
    (tmp_path / "s.yaml").write_text("site: {file: b.building.yaml}\n" + ROBOT)
    done = fleetsim("validate", str(tmp_path / "s.yaml"), cwd=tmp_path)
    assert done.returncode == 2, (what, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and said in done.stderr, done.stderr


GRAPH_CASES = [
    ("a node x that is a word", "[{name: a, x: left, y: 0}, {name: b, x: 1, y: 0}]",
     "[{from: a, to: b}]", "nodes[0].x ('a'): expected a number of metres, got 'left'"),
    ("a speed limit of 0", "[{name: a, x: 0, y: 0}, {name: b, x: 1, y: 0}]",
     "[{from: a, to: b, speed_limit: 0}]",
     "lanes[0].speed_limit: expected m/s > 0 (leave it out for no limit), got 0"),
    ("a lane without an end", "[{name: a, x: 0, y: 0}, {name: b, x: 1, y: 0}]",
     "[{from: a}]", "lanes[0]: expected {from, to, ...}"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "nodes", "lanes", "said"), GRAPH_CASES,
                         ids=[c[0] for c in GRAPH_CASES])  # fmt: skip
def test_bad_site_graphs_are_clear_errors(tmp_path: Path, what: str, nodes: str, lanes: str,
                                          said: str) -> None:  # fmt: skip
    (tmp_path / "s.yaml").write_text(f"site:\n  graph:\n    nodes: {nodes}\n"
                                     f"    lanes: {lanes}\n" + ROBOT)  # fmt: skip
    done = fleetsim("validate", str(tmp_path / "s.yaml"))
    assert done.returncode == 2, (what, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and said in done.stderr, done.stderr
    assert "s.yaml line 1: site" in done.stderr
