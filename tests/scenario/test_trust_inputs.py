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
    (
        "a vertex coordinate that is a word",
        building("    vertices:\n      - [left, 0, 0, a]\n      - [1, 0, 0, b]\n" + LANES),
        "b.building.yaml line 5: levels.L1.vertices[0]: expected [x, y, z, name, {params}]",
    ),
    (
        "a vertex with one number",
        building("    vertices:\n      - [0]\n      - [1, 0, 0, b]\n" + LANES),
        "b.building.yaml line 5: levels.L1.vertices[0]",
    ),
    (
        "lanes that are a number",
        building(VERTICES + "    lanes: 5\n"),
        "b.building.yaml line 7: levels.L1.lanes: expected a list, got int 5",
    ),
    (
        "a lane that is not a pair",
        building(VERTICES + "    lanes:\n      - 7\n"),
        "b.building.yaml line 8: levels.L1.lanes[0]: expected [vertex, vertex, {params}]",
    ),
    (
        "a building nested 20,000 deep",
        "levels: " + "[" * 20000 + "]" * 20000 + "\n",
        "b.building.yaml line 1: nested deeper than 64 levels",
    ),
]


@pytest.mark.parametrize(("what", "text", "said"), CASES, ids=[c[0] for c in CASES])
def test_bad_buildings_are_clear_errors(tmp_path: Path, what: str, text: str, said: str) -> None:
    (tmp_path / "b.building.yaml").write_text(text)
    (tmp_path / "s.yaml").write_text("site: {file: b.building.yaml}\n" + ROBOT)
    done = fleetsim("validate", str(tmp_path / "s.yaml"), cwd=tmp_path)
    assert done.returncode == 2, (what, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and said in done.stderr, done.stderr


GRAPH_CASES = [
    (
        "a node x that is a word",
        "[{name: a, x: left, y: 0}, {name: b, x: 1, y: 0}]",
        "[{from: a, to: b}]",
        "nodes[0].x ('a'): expected a number of metres, got 'left'",
    ),
    (
        "a speed limit of 0",
        "[{name: a, x: 0, y: 0}, {name: b, x: 1, y: 0}]",
        "[{from: a, to: b, speed_limit: 0}]",
        "lanes[0].speed_limit: expected m/s > 0 (leave it out for no limit), got 0",
    ),
    (
        "a lane without an end",
        "[{name: a, x: 0, y: 0}, {name: b, x: 1, y: 0}]",
        "[{from: a}]",
        "lanes[0]: expected {from, to, ...}",
    ),
]


@pytest.mark.parametrize(
    ("what", "nodes", "lanes", "said"), GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES]
)
def test_bad_site_graphs_are_clear_errors(
    tmp_path: Path, what: str, nodes: str, lanes: str, said: str
) -> None:
    (tmp_path / "s.yaml").write_text(
        f"site:\n  graph:\n    nodes: {nodes}\n    lanes: {lanes}\n" + ROBOT
    )
    done = fleetsim("validate", str(tmp_path / "s.yaml"))
    assert done.returncode == 2, (what, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and said in done.stderr, done.stderr
    assert "s.yaml line 1: site" in done.stderr


DEPOT = Path(__file__).parents[1] / "fleet" / "cases" / "depot"


def depot_with(tmp_path: Path, tasks: dict[str, str], **params: object) -> Path:
    import yaml

    data = yaml.safe_load((DEPOT / "depot.yaml").read_text())
    data["plugins"][0]["params"].update({"tasks": tasks, **params})
    path = tmp_path / "depot.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (tmp_path / "orders.csv").write_text((DEPOT / "orders.csv").read_text())
    return path


TASK_FILES = [
    ("random bytes", "rand.csv", bytes(range(256)) * 2, "rand.csv: cannot read tasks"),
    ("an empty file", "empty.csv", b"", "empty.csv: the file is empty; a task file has a header"),
    (
        "a header without places",
        "cols.csv",
        b"a,b\n1,2\n",
        "cols.csv line 1: the header ['a', 'b'] names no 'pickup' and 'dropoff' columns",
    ),
    (
        "places that are a number",
        "p42.json",
        b'[{"id": "a", "places": 42}]',
        "p42.json: tasks[0]: places: expected a list of place names, got 42",
    ),
    (
        "a list nested 100,000 deep",
        "deep.json",
        b"[" * 100000 + b"]" * 100000,
        "deep.json: nested too deeply to be a list of tasks",
    ),
]


@pytest.mark.parametrize(
    ("what", "name", "content", "said"), TASK_FILES, ids=[c[0] for c in TASK_FILES]
)
def test_bad_task_files_are_clear_errors(
    tmp_path: Path, what: str, name: str, content: bytes, said: str
) -> None:
    (tmp_path / name).write_bytes(content)
    path = depot_with(tmp_path, {"file": name})
    done = fleetsim("validate", str(path))
    assert done.returncode == 2, (what, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and said in done.stderr, done.stderr
    assert "depot.yaml line " in done.stderr and "plugins[0]" in done.stderr  # the scenario too


def test_a_fleet_manager_naming_an_unknown_robot(tmp_path: Path) -> None:
    path = depot_with(tmp_path, {"file": "orders.csv"}, robots=["amr_0", "amr_11"])
    done = fleetsim("validate", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "params.robots: no robot named 'amr_11' in the scenario: did you mean" in done.stderr


def test_a_grid_map_without_a_free_cell(tmp_path: Path) -> None:
    (tmp_path / "full.map").write_text("type octile\nheight 2\nwidth 3\nmap\n@@@\nTTT\n")
    (tmp_path / "s.yaml").write_text("site: {file: full.map}\n" + ROBOT)
    done = fleetsim("validate", str(tmp_path / "s.yaml"))
    assert done.returncode == 2 and "full.map: no free cell" in done.stderr, done.stderr


def test_site_check_refuses_a_negative_tolerance(tmp_path: Path) -> None:
    (tmp_path / "ok.map").write_text("type octile\nheight 3\nwidth 3\nmap\n...\n...\n...\n")
    done = fleetsim("site", "check", str(tmp_path / "ok.map"), "--tolerance", "-1")
    assert done.returncode == 2 and "--tolerance -1.0: expected metres >= 0" in done.stderr


def test_an_output_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where a folder should be")
    for option, name in (("--output", "r.json"), ("--record", "r.mcap")):
        done = fleetsim("run", "warehouse", option, str(blocker / name))
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{option} {blocker / name}: cannot write there" in done.stderr
        assert "fleetsim run summary" not in done.stdout  # nothing ran


def test_library_inputs() -> None:
    from fleetsim import ConfigError
    from fleetsim.actions import JointAction, PoseAction
    from fleetsim.agents import GridSpawnParams

    flat = GridSpawnParams(spacing=[2, 2, 0]).positions(4)  # how PyBulletFleet writes a flat grid
    assert flat[:, 2].tolist() == [0.0] * 4 and flat[3, :2].tolist() == [2.0, 2.0]
    with pytest.raises(ConfigError, match="grid spacing must be finite and > 0 m"):
        GridSpawnParams(spacing=[2, 0, 1])
    for bad in (-1, 0, float("nan"), [0.1, -2], {"elbow": 0}):
        with pytest.raises(ConfigError, match="tolerance must be finite and > 0"):
            JointAction([0.1, 0.2], tolerance=bad)
    with pytest.raises(ConfigError, match="PoseAction: tolerance must be finite and > 0"):
        PoseAction([0.3, 0.0, 0.4], tolerance=-0.01)
    assert JointAction([0.1], tolerance={"elbow": 0.05}).tolerance == {"elbow": 0.05}


def test_failures_are_grouped_by_reason_without_the_robots_name(tmp_path: Path) -> None:
    """Twelve robots each fail the same way: one line, with a count and a few robots (the
    robot's name in the message used to make twelve reasons)."""
    (tmp_path / "drop.yaml").write_text(
        "simulation: {duration: 2, target_rtf: 0}\n"
        "robots:\n"
        "  - {name: amr, model: mobile_robot, grid: {count: 12, spacing: 3},\n"
        "     actions: [{type: drop, relative_pose: [0, 0, 0], use_approach: false}]}\n"
    )
    done = fleetsim("run", str(tmp_path / "drop.yaml"))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if " x Drop:" in line]
    assert len(lines) == 1, done.stdout
    assert (
        "12 x Drop: nothing to drop: <robot> holds no object (amr_0, amr_1, amr_2, ...)"
        in (lines[0])
    )


def test_a_poisson_rate_no_site_could_serve_is_refused_at_once(tmp_path: Path) -> None:
    """A rate of 1e9 orders an hour used to make a 5 s run take minutes."""
    pickups = ["n3_0", "n3_2"]
    path = depot_with(
        tmp_path, {"poisson": {"rate_per_hour": 1e9, "pickups": pickups, "dropoffs": ["n0_1"]}}
    )
    done = fleetsim("validate", str(path), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "2,000,000,000 orders an hour" in done.stderr and "at most 1,000,000" in done.stderr


def test_what_would_not_fit_in_memory_is_refused_with_the_estimate(tmp_path: Path) -> None:
    side = 5000  # (3,000 x 3,000 fits since grids got cheap: about 1.4 GB)
    (tmp_path / "huge.map").write_text(
        f"type octile\nheight {side}\nwidth {side}\nmap\n" + ("." * side + "\n") * side
    )
    (tmp_path / "grid.yaml").write_text(
        "site: {file: huge.map}\nrobots: [{model: mobile_robot, pose: {position: [0.5, 0.5, 0]}}]\n"
    )
    (tmp_path / "layout.yaml").write_text(
        "site: {layout: {type: warehouse, aisles: 1000000}}\n" + ROBOT
    )
    for name, said in (
        ("grid.yaml", "25,000,000 nodes would need about 4.0 GB"),
        ("layout.yaml", "21,000,005 nodes would need about 42.0 GB"),
    ):
        done = fleetsim("validate", str(tmp_path / name), timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert said in done.stderr and "over the limit of 3 GB" in done.stderr
        assert "FLEETSIM_MAX_SITE_GB" in done.stderr
        if name == "layout.yaml":  # at the layout's key, naming the numbers that make it big
            assert "layout.yaml line 1: site.layout:" in done.stderr, done.stderr
            assert "aisles 1,000,000 x blocks 1" in done.stderr, done.stderr


def test_a_library_spawn_that_would_not_fit_is_refused() -> None:
    from fleetsim import ConfigError, MultiRobotSimulationCore, SimulationParams
    from fleetsim.agents import AgentManager, AgentSpawnParams, GridSpawnParams

    with MultiRobotSimulationCore(SimulationParams(gui=False)) as sim:
        manager = AgentManager(sim)
        with pytest.raises(ConfigError, match=r"1,000,000,000 bodies would need about 2,600"):
            manager.spawn_agents_grid(
                10**9, GridSpawnParams(), AgentSpawnParams(urdf_path="simple_cube")
            )
        assert len(sim.world.bodies) == 0  # nothing was built


def test_task_file_errors_found_against_the_site_name_the_file_row(tmp_path: Path) -> None:
    """An unknown place on the file's third task, released first: the error names the task
    file, its line and the row (not the release order, not only the scenario's plugin line);
    a release time that is not a number says so."""
    rows = (DEPOT / "orders.csv").read_text().splitlines()
    header, first, second = rows[0], rows[1], rows[2]
    cols = header.split(",")
    bad = dict(zip(cols, first.split(","), strict=True))
    bad.update(id="lost", dropoff="atlantis", release_time="0")
    late = [dict(zip(cols, r.split(","), strict=True)) for r in (first, second)]
    for row in late:
        row["release_time"] = "500"
    lines = [header] + [",".join(r[c] for c in cols) for r in (*late, bad)]
    (tmp_path / "odd.csv").write_text("\n".join(lines) + "\n")
    path = depot_with(tmp_path, {"file": "odd.csv"})
    done = fleetsim("validate", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "odd.csv line 4: tasks[2] (lost): unknown node 'atlantis'" in done.stderr, done.stderr
    nan = dict(late[0], release_time="nan")
    (tmp_path / "nan.csv").write_text(header + "\n" + ",".join(nan[c] for c in cols) + "\n")
    done = fleetsim("validate", str(depot_with(tmp_path, {"file": "nan.csv"})))
    assert done.returncode == 2
    assert "nan.csv line 2: tasks[0]: release_time: not a number" in done.stderr, done.stderr
