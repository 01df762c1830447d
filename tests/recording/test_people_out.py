"""People in recordings and the live view: `/people`, a foxglove.SceneUpdate with a cylinder a
person, read back from the MCAP file and from `fleetsim run --serve` by a real WebSocket
client; a deletion once the last one has left; a large crowd written every few frames."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
from mcap.reader import make_reader

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.interfaces.serving import free_port
from fleetsim.recording.people_out import PER_FRAME
from fleetsim.recording.schemas import foxglove

from ..people.test_on_site import warehouse_row
from .test_live import run, watch


def people_messages(path: Path) -> list[tuple[int, object]]:
    scene = foxglove("SceneUpdate")
    with path.open("rb") as f:
        return [(m.log_time, scene.FromString(m.data))
                for _, _, m in make_reader(f).iter_messages(topics=["/people"])]  # fmt: skip


def test_a_recording_draws_each_person_where_they_were(tmp_path: Path) -> None:
    path = tmp_path / "people.mcap"
    seen: dict[int, np.ndarray] = {}
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        sim.set_site(warehouse_row())
        west = sim.people.route_between("n10", "n0")
        sim.people.add(np.array([[20.0, 0.5], [19.0, -0.4]]), [west, west],
                       speeds=np.array([1.0, 1.4]), radius=np.array([0.2, 0.25]))  # fmt: skip
        recorder = sim.record(path)
        sim.on("post_step", lambda *_: seen.__setitem__(round(sim.sim_time * 1e9),
                                                        sim.people.positions.copy()))  # fmt: skip
        for _ in range(300):
            sim.step_once()
        recorder.close()
    got = people_messages(path)
    drawn = [(t, m) for t, m in got if m.entities]  # type: ignore[attr-defined]
    assert len(drawn) > 100
    for t, message in drawn[1:]:  # (the first frame: before the first step)
        [entity] = message.entities  # type: ignore[attr-defined]
        xy = np.array([[c.pose.position.x, c.pose.position.y] for c in entity.cylinders])
        np.testing.assert_allclose(xy, seen[t], atol=1e-9)
        assert [c.size.x for c in entity.cylinders] == [0.4, 0.5][: len(xy)]
        assert all(c.size.z == 1.7 and c.pose.position.z == 0.85 for c in entity.cylinders)
    last_time, last = got[-1]
    assert [d.id for d in last.deletions] == ["people"]  # type: ignore[attr-defined]
    assert last_time > drawn[-1][0]  # (after the last one left; nothing after that)


def test_a_large_crowd_is_written_every_few_frames(tmp_path: Path) -> None:
    path = tmp_path / "crowd.mcap"
    n = 2 * PER_FRAME + 1  # three frames' worth
    with MultiRobotSimulationCore(SimulationParams(timestep=0.1, target_rtf=0)) as sim:
        rng = np.random.default_rng(0)
        spots = rng.uniform(0, 200, (n, 2))
        sim.people.add(spots, [p[None] for p in spots])  # (each stands at its route's end)
        sim.people.staying.update(sim.people.crowd.ids.tolist())  # (and stays)
        recorder = sim.record(path)
        for _ in range(30):
            sim.step_once()
        recorder.close()
    got = people_messages(path)
    assert 9 <= len(got) <= 12  # 31 frames, one in three
    assert all(len(m.entities[0].cylinders) == n for _, m in got)  # type: ignore[attr-defined]


def test_the_live_view_shows_the_people() -> None:
    port = free_port()
    proc = run("run", "warehouse_shift", "--serve", "--serve-port", str(port), "--rtf", "2",
               "--duration", "120")  # fmt: skip
    try:
        channels, got = asyncio.run(watch(f"ws://127.0.0.1:{port}", "/people", 3))
        assert channels["/people"]["schemaName"] == "foxglove.SceneUpdate"
        scene = foxglove("SceneUpdate").FromString(got[-1][1])
        [entity] = scene.entities
        assert entity.id == "people" and len(entity.cylinders) == 30  # the early shift
    finally:
        proc.kill()
        proc.wait(10)
