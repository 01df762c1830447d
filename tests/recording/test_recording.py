"""Recordings written by `fleetsim run --record` and `sim.record`, read back with the mcap
reader and the Foxglove schemas: pose for pose against a live run of the same scenario and
seed, the scene, events, metadata, and the errors."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from mcap.reader import make_reader

import fleetsim.recording
from fleetsim import (
    Agent,
    AgentManager,
    AgentSpawnParams,
    ConfigError,
    FleetSimError,
    GridSpawnParams,
    Pose,
    SimObject,
)
from fleetsim.actions import MoveTo, Pick
from fleetsim.geometry import quat
from fleetsim.objects import ShapeParams, SimObjectSpawnParams
from fleetsim.recording import record, slots
from fleetsim.recording.replay import Replay
from fleetsim.scenario import build, load_scenario

from ..conftest import make_sim


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "run", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_recording_matches_a_live_run_pose_for_pose(tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    done = run_cli(
        "crate_shuttle",
        "--seed",
        "7",
        "--duration",
        "20",
        "--record",
        str(out),
        "--record-rate",
        "5",
    )
    assert done.returncode == 0, done.stderr
    assert f"recording: {out}" in done.stdout
    live: dict[int, dict[str, np.ndarray]] = {}
    built = build(load_scenario("crate_shuttle"), seed=7, duration=20)
    with built.sim as sim:

        def snap(*_: object) -> None:
            live[sim.step_count] = {
                r.name: np.array(r.get_pose().position) for r in built.scene.robots
            }

        snap()
        sim.on("post_step", snap)
        sim.run_simulation(20)
    with fleetsim.recording.open(out) as recording:
        assert recording.metadata["scenario"] == "crate_shuttle"
        assert recording.metadata["seed"] == "7"
        frames = list(recording.frames())
    assert [round(f.time, 6) for f in frames] == [round(0.2 * k, 6) for k in range(101)]
    moved = 0.0
    for frame in frames:
        step = round(frame.time / built.sim.params.timestep)
        for name, xyz in zip(frame.names, frame.xyz, strict=True):
            assert np.abs(xyz - live[step][name]).max() < 1e-3, (frame.time, name)
        moved = max(moved, float(np.abs(frame.xyz - frames[0].xyz).max()))
    assert moved > 1.0  # the robots drove: the comparison is not of standing robots


def test_the_file_is_self_describing_for_foxglove(tmp_path: Path) -> None:
    """Every channel names its schema; the protobuf ones decode with only the descriptor set
    stored in the file (what Foxglove does), and /fleet is one message per frame."""
    out = tmp_path / "run.mcap"
    with make_sim(timestep=0.1) as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 2.0 * k, 0), sim_core=sim, name=f"amr{k}"
            )
            for k in range(4)
        ]
        for r in robots:
            r.set_waypoints([[3.0, r.get_pose().position[1]]], [0.0])
        record(sim, out, rate=10)
        for _ in range(20):
            sim.step_once()
    with out.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        topics = {c.topic: c for c in summary.channels.values()}
        assert set(topics) >= {"/fleet", "/fleet/robots", "/scene", "/events"}
        kinds = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
        assert (
            kinds["/fleet"] == "foxglove.PointCloud" and kinds["/scene"] == "foxglove.SceneUpdate"
        )
        counts = summary.statistics.channel_message_counts  # type: ignore[union-attr]
        assert counts[topics["/fleet"].id] == 21  # frames at 0, 0.1, ... 2.0 s: one each
        schema = summary.schemas[topics["/fleet"].schema_id]
        assert schema.encoding == "protobuf" and topics["/fleet"].message_encoding == "protobuf"
        files = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
        pool = descriptor_pool.DescriptorPool()
        for file in files.file:
            pool.Add(file)
        cloud_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
        _s, _c, last = list(reader.iter_messages(topics=["/fleet"]))[-1]
        cloud = cloud_class.FromString(last.data)
        assert [f.name for f in cloud.fields] == ["x", "y", "z", "yaw", "id"]
        assert len(cloud.data) == 4 * cloud.point_stride and cloud.frame_id == "world"
        assert last.log_time == 2_000_000_000  # simulated time
        assert json.loads(summary.schemas[topics["/events"].schema_id].data)["title"]


def test_scene_static_world_site_and_bodies_that_come_and_go(tmp_path: Path) -> None:
    out = tmp_path / "site.mcap"
    built = build(load_scenario("site_warehouse"), duration=2)
    with built.sim as sim:
        record(sim, out, rate=10)
        crate = SimObject.from_params(
            SimObjectSpawnParams(
                visual_shape=ShapeParams(half_extents=(0.2, 0.2, 0.2)),
                initial_pose=Pose.from_xyz(1.0, 1.0, 0.2),
                name="crate",
            ),
            sim_core=sim,
        )
        sim.step_once()
        crate.remove()
        sim.step_once()
        sim.step_once()
        graph = sim.site.graph  # type: ignore[union-attr]
        static_count = int(np.sum(sim.world.bodies["collision_mode"] == 2))
    scene_class = fleetsim.recording.schemas.foxglove("SceneUpdate")
    with fleetsim.recording.open(out) as recording:
        updates = [scene_class.FromString(d) for _t, _time, d in recording.messages("/scene")]
    first = {e.id: e for e in updates[0].entities}
    assert len(first["static"].cubes) == 1 + static_count  # the floor and every static body
    assert len(first["site"].lines[0].points) == 2 * len(graph.lane_from)
    assert {t.text for t in first["site"].texts} == set(graph.names)
    ids = [e.id for u in updates for e in u.entities if e.id.startswith("body/")]
    gone = [d.id for u in updates for d in u.deletions]
    assert ids and gone == ids[:1]  # the crate appeared, then was deleted


def test_events_and_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "arm.mcap"
    done = run_cli("crate_shuttle", "--duration", "30", "--record", str(out))
    assert done.returncode == 0, done.stderr
    with fleetsim.recording.open(out) as recording:
        kinds = {e["kind"] for e in recording.events()}
    assert {"recording_started", "action_completed"} <= kinds
    bad = run_cli("crate_shuttle", "--record", str(tmp_path / "run.txt"))
    assert bad.returncode == 2 and "use a .mcap file name" in bad.stderr
    bad = run_cli("crate_shuttle", "--record", str(out), "--record-rate", "0")
    assert bad.returncode == 2 and "--record-rate" in bad.stderr
    not_mcap = tmp_path / "x.mcap"
    not_mcap.write_text("hello")
    with pytest.raises(ConfigError, match="not an MCAP recording"):
        fleetsim.recording.open(not_mcap)
    with make_sim() as sim, pytest.raises(ConfigError, match="record rate"):
        record(sim, tmp_path / "y.mcap", rate=-1)
    with make_sim() as sim, pytest.raises(ConfigError, match="nowhere"):
        record(sim, tmp_path / "nowhere" / "z.mcap")


def test_warnings_and_errors_are_events(tmp_path: Path) -> None:
    """fleetsim's logged warnings and errors, from the simulation's thread or another, are
    `/events` at the simulated time they were written."""
    import logging
    import threading

    def fails(*_: object) -> None:
        if sim.step_count == 3:
            raise ValueError("handler broke")

    with make_sim(timestep=0.1) as sim:
        record(sim, tmp_path / "run.mcap")
        sim.on("post_step", fails)
        sim.on("post_step", fails)  # the second error in a step is logged, the first raised
        for _ in range(2):
            sim.step_once()
        with pytest.raises(ValueError, match="handler broke"):
            sim.step_once()
        server = threading.Thread(
            target=logging.getLogger("fleetsim.interfaces.x").warning, args=("client went away",)
        )
        server.start()
        server.join()
        logging.getLogger("elsewhere").error("not ours")
        sim.step_once()
    with fleetsim.recording.open(tmp_path / "run.mcap") as recording:
        events = [e for e in recording.events() if e["kind"] in ("warning", "error")]
    assert [(e["kind"], e["logger"]) for e in events] == [
        ("error", "fleetsim.events"),
        ("warning", "fleetsim.interfaces.x"),
    ]
    assert "handler broke" in events[0]["message"] and events[0]["time"] == pytest.approx(0.3)
    assert events[1]["message"] == "client went away" and events[1]["time"] == pytest.approx(0.3)


def test_a_writer_that_dies_is_an_error_not_a_hang(tmp_path: Path) -> None:
    with make_sim(timestep=0.1) as sim:
        Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="r")
        recorder = record(sim, tmp_path / "run.mcap")
        recorder._out._proc.kill()
        recorder._out._proc.wait(10)
        with pytest.raises(FleetSimError, match="recording"):
            for _ in range(100):
                sim.step_once()
        sim.step_once()  # the simulation goes on, no longer recording
        with pytest.raises(FleetSimError, match="recording"):
            recorder.close()


def test_a_fleet_that_grows_and_a_reset(tmp_path: Path) -> None:
    """Robots spawned mid-recording (past the shared-memory slots' first size) are in the
    following frames at their live poses; `reset()` ends the recording; nothing is left in
    shared memory."""
    before = set(Path(slots.SHM_DIR).glob("fleetsim-poses-*"))
    cube = AgentSpawnParams(urdf_path="simple_cube")
    with make_sim(timestep=0.1) as sim:
        manager = AgentManager(sim)
        manager.spawn_objects_grid(3, GridSpawnParams(x_max=3, y_max=3), cube)
        recorder = record(sim, tmp_path / "grow.mcap", rate=10)
        sim.step_once()
        grid = GridSpawnParams(x_min=5, x_max=20, y_min=5, y_max=20, spacing=(1.5, 1.5))
        more = manager.spawn_objects_grid(100, grid, cube)
        more[7].set_goal_pose(Pose.from_xyz(0.0, 30.0, 0.0))
        for _ in range(5):
            sim.step_once()
        live = sim.world.bodies["pos"][sim.world.bodies["robot"]].copy()
        frames_before_reset = recorder.frames
        sim.reset()
        assert recorder._closed and sim.step_count == 0
        sim.step_once()  # no longer recorded
    with fleetsim.recording.open(tmp_path / "grow.mcap") as recording:
        frames = list(recording.frames())
    assert len(frames) == frames_before_reset
    assert [len(f.xyz) for f in frames][:2] == [3, 3] and len(frames[-1].xyz) == 103
    assert np.allclose(frames[-1].xyz, live, atol=1e-3)
    assert frames[-1].xyz[3 + 7][1] > frames[2].xyz[3 + 7][1] + 0.1  # the one sent off moved
    assert set(Path(slots.SHM_DIR).glob("fleetsim-poses-*")) <= before


def test_pause_and_resume(tmp_path: Path) -> None:
    """A recorder started late and paused: frames keep its rate from its start and from its
    resume (none while paused, none to catch up), at the live poses; an action that ends while
    paused is not an event."""
    cube = AgentSpawnParams(urdf_path="simple_cube")
    with make_sim(timestep=0.1) as sim:
        robot = Agent.from_params(cube, sim)
        robot.add_action(MoveTo(Pose.from_xyz(3.0, 0.0, 0.0)))
        for _ in range(3):
            sim.step_once()
        live: dict[int, float] = {}
        sim.on("post_step", lambda *_: live.__setitem__(sim.step_count, robot.get_pose().x))
        recorder = record(sim, tmp_path / "run.mcap", rate=5)  # a frame every 2 steps
        live[sim.step_count] = robot.get_pose().x
        for _ in range(6):
            sim.step_once()
        recorder.pause()
        assert recorder.paused
        for _ in range(30):  # the robot arrives (an action_completed) while paused
            sim.step_once()
        robot.add_action(MoveTo(Pose.from_xyz(3.0, 2.0, 0.0)))
        recorder.resume()
        for _ in range(35):  # the second goal reached while recorded: an event
            sim.step_once()
        first_name = robot.name
        robot.name = "renamed"  # events name a robot as it is called at the time
        robot.add_action(Pick(target_position=[50.0, 0.0, 0.0], use_approach=False))
        sim.step_once()  # nothing to pick there: failed at once (between steps), with a reason
        recorder.close()
    with fleetsim.recording.open(tmp_path / "run.mcap") as recording:
        frames = list(recording.frames())
        events = [e for e in recording.events() if e["kind"].startswith("action")]
        kinds = [e["kind"] for e in events]
    steps = [round(f.time / 0.1) for f in frames]
    assert steps == [3, 5, 7, 9, *range(40, 75, 2)]
    for step, frame in zip(steps, frames, strict=True):
        assert abs(float(frame.xyz[0][0]) - live[step]) < 1e-3
    assert float(frames[3].xyz[0][0]) < 2.0 < 2.99 < float(frames[4].xyz[0][0])
    assert float(frames[-1].xyz[0][1]) > 1.99  # at the second goal
    assert kinds == ["action_completed", "action_failed"]  # the first MoveTo ended paused
    done, failed = events
    assert done == {
        "kind": "action_completed",
        "time": done["time"],
        "robot": first_name,
        "action": "MoveTo",
    }
    assert 5.9 < done["time"] < 7.5
    assert failed["robot"] == "renamed" and failed["action"] == "Pick"
    assert "no pickable object" in failed["reason"] and failed["time"] == pytest.approx(7.4)


def test_replay_shows_what_was_recorded(tmp_path: Path) -> None:
    """Every frame replayed puts each robot's box where the recording (and so the live run)
    had it; the static world comes back as boxes; seeking starts at the asked time."""
    out = tmp_path / "run.mcap"
    live: dict[int, np.ndarray] = {}
    with make_sim(timestep=0.1) as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot", Pose.from_xyz(0, 2.0 * k, 0), sim_core=sim, name=f"amr{k}"
            )
            for k in range(3)
        ]
        SimObject.static_boxes([[5.0, 5.0, 0.5]], [[1.0, 0.2, 0.5]], [0.3], sim_core=sim)
        for k, r in enumerate(robots):
            r.set_waypoints([[4.0, 2.0 * k + 1.0]], [1.0])
        record(sim, out, rate=10)
        for _ in range(60):
            sim.step_once()
            live[sim.step_count] = np.array([r.get_pose().position for r in robots])
    with fleetsim.recording.open(out) as recording, make_sim() as viewer:
        replay = Replay(recording, viewer)
        assert len(viewer.sim_objects) == 2  # the floor and the wall
        checked = 0
        for frame in recording.frames():
            replay.show(frame)
            boxes = [replay.robots[name] for name in frame.names]
            pos, orn = viewer.get_poses(boxes)
            assert np.allclose(pos, frame.xyz) and np.allclose(
                quat.yaw_of(orn), frame.yaw, atol=1e-6
            )
            step = round(frame.time / 0.1)
            if step in live:
                assert np.abs(pos - live[step]).max() < 1e-3
                checked += 1
        assert checked == 60 and np.abs(pos[:, 0] - 4.0).max() < 0.06  # they arrived
        later = next(recording.frames(start=3.0))
        assert later.time == pytest.approx(3.0) and later.names == ["amr0", "amr1", "amr2"]
        played = replay.play(speed=0, start=2.0, until=4.0)
        assert (played.frames, played.start, played.end) == (
            21,
            pytest.approx(2.0),
            pytest.approx(4.0),
        )


def test_the_replay_command(tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    assert run_cli("crate_shuttle", "--duration", "4", "--record", str(out)).returncode == 0

    def replay(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fleetsim", "replay", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = replay(str(out), "--headless", "--speed", "0")
    assert done.returncode == 0 and "replayed 41 frames, 0.0 to 4.0 s" in done.stdout, done.stderr
    done = replay(str(out), "--headless", "--speed", "4", "--start", "1")
    assert done.returncode == 0 and "replayed 31 frames, 1.0 to 4.0 s" in done.stdout
    bad = replay(str(out), "--headless", "--speed", "-1")
    assert bad.returncode == 2 and "--speed" in bad.stderr
    bad = replay(str(out), "--headless", "--start", "9")
    assert bad.returncode == 2 and "ends at 4.0 s" in bad.stderr
    bad = replay(str(tmp_path / "missing.mcap"), "--headless")
    assert bad.returncode == 2 and "missing.mcap" in bad.stderr


def test_fleet_state_and_kpis_from_the_fleet_manager(tmp_path: Path) -> None:
    out = tmp_path / "warehouse.mcap"
    results = tmp_path / "results.json"
    done = run_cli("warehouse", "--duration", "130", "--record", str(out), "--output", str(results))
    assert done.returncode == 0, done.stderr
    with fleetsim.recording.open(out) as recording:
        tables = [json.loads(d) for _t, _time, d in recording.messages("/fleet/state")]
        kpis = [json.loads(d) for _t, _time, d in recording.messages("/kpi")]
        names = next(recording.frames()).names
        events = recording.events()
    assert [t["time"] for t in tables] == [pytest.approx(float(k)) for k in range(131)]
    last = tables[-1]
    assert last["states"][:3] == ["idle", "moving", "waiting"]
    assert len(last["state"]) == len(last["task"]) == len(last["speed"]) == len(names) == 100
    busy = [k for k, t in enumerate(last["task"]) if t is not None]
    assert busy and all(last["state"][k] != 0 for k in busy)  # a robot with a task is not idle
    assert max(max(t["speed"]) for t in tables) > 0.5
    assert [k["time"] for k in kpis] == [pytest.approx(60.0), pytest.approx(120.0)]
    done_events = [e for e in events if e["kind"] == "task_done"]
    assert sum(e["time"] <= 120.0 for e in done_events) == kpis[1]["tasks_completed"]
    assert all(e["cycle_time_s"] > 0 and e["robot"] in names for e in done_events)
    assert kpis[1]["tasks_released"] >= kpis[1]["tasks_completed"] > 0
    done = report_cli(str(out))
    assert done.returncode == 0, done.stderr
    page = out.with_suffix(".html").read_text()
    for title in ("Tasks and throughput", "Robot states", "Task cycle times"):
        assert f"<h2>{title}</h2>" in page
    assert all(png.startswith(b"\x89PNG") for png in pngs(page)) and len(pngs(page)) >= 3
    assert "<h1>warehouse</h1>" in page and "<td>100</td>" in page  # the robots
    bad = report_cli(str(out), "-o", str(tmp_path / "r.txt"))
    assert bad.returncode == 2 and "use a .html file name" in bad.stderr
    # the same plots from the run's results file (no recording needed)
    done = report_cli(str(results), "-o", str(tmp_path / "from_results.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "from_results.html").read_text()
    for title in ("Tasks and throughput", "Robot states", "Task cycle times"):
        assert f"<h2>{title}</h2>" in page
    (tmp_path / "other.json").write_text('{"hello": 1}')
    bad = report_cli(str(tmp_path / "other.json"))
    assert bad.returncode == 2 and "not a fleetsim results file" in bad.stderr


def report_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "report", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def pngs(page: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r"base64,([^\"]+)\"", page)]


def test_collisions_are_events_and_the_report_places_them(tmp_path: Path) -> None:
    out = tmp_path / "crash.mcap"
    with make_sim(timestep=0.1) as sim:
        a = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="east")
        b = Agent.from_urdf("mobile_robot", Pose.from_xyz(6, 0, 0), sim_core=sim, name="west")
        a.set_waypoints([[6.0, 0.0]], [0.0])
        b.set_waypoints([[0.0, 0.0]], [3.14])
        record(sim, out, rate=10)
        for _ in range(120):
            sim.step_once()
        began = sim.collision_count
    with fleetsim.recording.open(out) as recording:
        events = [e for e in recording.events() if e["kind"] == "collisions"]
    assert began >= 1 and sum(len(e["pairs"]) for e in events) == began
    assert sorted(events[0]["pairs"][0]) == ["east", "west"] and 2.0 < events[0]["time"] < 4.0
    done = report_cli(str(out), "-o", str(tmp_path / "crash.html"))
    assert done.returncode == 0, done.stderr
    assert "Collisions and near misses" in done.stdout
    page = (tmp_path / "crash.html").read_text()
    assert "<h2>Robot states</h2>" in page  # idle or moving, without a fleet manager
    assert len(pngs(page)) == 2 and all(png.startswith(b"\x89PNG") for png in pngs(page))
    assert "collisions began</th><td>" + str(began) in page


def test_a_robot_renamed_while_recorded(tmp_path: Path) -> None:
    """`object_renamed` fires when a name is set; the recording's frames and collision events
    use the new name from then on."""
    with make_sim(timestep=0.1) as sim:
        a = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="east")
        b = Agent.from_urdf("mobile_robot", Pose.from_xyz(6, 0, 0), sim_core=sim, name="west")
        renamed: list[str] = []
        sim.on("object_renamed", lambda obj: renamed.append(obj.name))
        a.set_waypoints([[6.0, 0.0]], [0.0])
        b.set_waypoints([[0.0, 0.0]], [3.14])
        record(sim, tmp_path / "run.mcap", rate=10)
        for _ in range(5):
            sim.step_once()
        b.name = "west-2"
        for _ in range(60):
            sim.step_once()
        assert sim.collision_count >= 1
    assert renamed == ["west-2"]
    with fleetsim.recording.open(tmp_path / "run.mcap") as recording:
        frames = list(recording.frames())
        events = [e for e in recording.events() if e["kind"] == "collisions"]
    assert "west" in frames[0].names and "west-2" in frames[-1].names
    assert sorted(events[0]["pairs"][0]) == ["east", "west-2"]


def test_collision_events_name_the_pairs_of_their_keys() -> None:
    """The writer process decodes the simulation's pair keys itself (it imports nothing of
    fleetsim): the same key layout, large handles, a body without a name."""
    from fleetsim.collision.pairs import KEY_SHIFT, pair_key
    from fleetsim.recording import mcap_process

    assert int(KEY_SHIFT) == mcap_process.PAIR_KEY_SHIFT
    names = mcap_process.Names()
    names.update({7: "r7", 1_000_003: 'quote"d', 5: "r5"})
    keys = pair_key(np.array([1_000_003, 7, 9]), np.array([7, 5, 7]))
    event = json.loads(names.collisions(2_500_000_000, keys.tobytes()))
    assert event == {
        "kind": "collisions",
        "time": 2.5,
        "pairs": [["r7", 'quote"d'], ["r5", "r7"], ["r7", 9]],
    }


def test_replay_in_the_window(tmp_path: Path) -> None:
    """The PyBullet window's path (keys polled every frame) on a virtual screen."""
    if shutil.which("xvfb-run") is None:
        pytest.skip("no xvfb-run for the window")
    out = tmp_path / "run.mcap"
    assert run_cli("crate_shuttle", "--duration", "3", "--record", str(out)).returncode == 0
    done = subprocess.run(
        [
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1024x768x24",
            sys.executable,
            "-m",
            "fleetsim",
            "replay",
            str(out),
            "--speed",
            "4",
            "--until",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "replayed 21 frames, 0.0 to 2.0 s" in done.stdout


def test_collision_events_with_checks_less_often_than_every_step(tmp_path: Path) -> None:
    """Checks twice a second at 0.1 s steps: a contact that starts and lasts is one
    `collisions` event at the check that found it, not one every step until the next check."""
    out = tmp_path / "sparse.mcap"
    with make_sim(timestep=0.1, collision_check_frequency=2.0) as sim:
        a = Agent.from_urdf("simple_cube", Pose.from_xyz(0, 0, 0), sim_core=sim, name="a")
        Agent.from_urdf("simple_cube", Pose.from_xyz(3, 0, 0), sim_core=sim, name="b")
        record(sim, out, rate=10)
        a.set_goal(Pose.from_xyz(3, 0, 0))  # drives into b and stays there
        for _ in range(80):
            sim.step_once()
    with fleetsim.recording.open(out) as rec:
        events = [e for e in rec.events() if e["kind"] == "collisions"]
    assert len(events) == 1, events
    (event,) = events
    assert [sorted(p) for p in event["pairs"]] == [["a", "b"]]


def test_a_site_with_more_lanes_than_drawn_records_no_lanes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big grid map's millions of lanes would make one huge scene message: past MAX_LANES
    the lanes are left out (its blocked cells still show the map)."""
    monkeypatch.setattr(fleetsim.recording.scene, "MAX_LANES", 50)
    out = tmp_path / "grid.mcap"
    built = build(load_scenario("grid_warehouse"), duration=0.3)
    with built.sim as sim:
        assert sim.site is not None and sim.site.graph.lane_count > 50
        record(sim, out, rate=10)
        sim.run_simulation()
    scene_class = fleetsim.recording.schemas.foxglove("SceneUpdate")
    with fleetsim.recording.open(out) as recording:
        updates = [scene_class.FromString(d) for _t, _time, d in recording.messages("/scene")]
    first = {e.id: e for e in updates[0].entities}
    assert len(first["site"].lines[0].points) == 0
    assert len(first["static"].cubes) > 1  # the floor and the blocked cells' boxes


def test_sim_record_is_recording_record(tmp_path: Path) -> None:
    """`sim.record(...)` (the core calls out to the recorder it was given) writes what
    `fleetsim.recording.record(sim, ...)` writes, and the file is finished when the
    simulation closes."""
    paths = []
    for how in ("method", "function"):
        path = tmp_path / f"{how}.mcap"
        with make_sim(timestep=0.1) as sim:
            amr = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="a")
            amr.set_waypoints([[2.0, 1.0]], [0.5])
            recorder = sim.record(path, rate=5) if how == "method" else record(sim, path, rate=5)
            assert isinstance(recorder, fleetsim.recording.Recorder)
            for _ in range(30):
                sim.step_once()
        paths.append(path)
    frames = []
    for path in paths:
        with fleetsim.recording.open(path) as rec:
            assert not rec.truncated
            frames.append([(f.time, *f.pose_of("a")[0]) for f in rec.frames()])
    assert len(frames[0]) == 16 and frames[0] == frames[1]
