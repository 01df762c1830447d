import threading
import time

import pytest

from fleetsim import ConfigError, MultiRobotSimulationCore
from fleetsim.core import Pacer

from ..conftest import make_sim, spawn_box


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pacer_steps_when_behind_and_saturates() -> None:
    clock = Clock()
    pacer = Pacer(timestep=0.01, target_rtf=2.0, max_steps_per_frame=10, clock=clock)
    pacer.start(sim_time=5.0)
    clock.now += 0.025  # 0.05 s of simulated time is due
    assert pacer.plan(sim_time=5.0, last_step_s=0.0) == (5, 0.0)
    clock.now += 10.0  # far behind: at most max_steps_per_frame
    assert pacer.plan(sim_time=5.0, last_step_s=0.0) == (10, 0.0)


def test_a_long_stall_is_not_caught_up_in_a_burst() -> None:
    clock = Clock()
    pacer = Pacer(timestep=0.01, target_rtf=1.0, max_steps_per_frame=10, clock=clock)
    pacer.start(sim_time=0.0)
    clock.now += 0.3  # ordinary lag (30 steps): caught up, 10 steps a frame
    assert pacer.plan(sim_time=0.0, last_step_s=0.0) == (10, 0.0)
    assert pacer.plan(sim_time=0.1, last_step_s=0.0) == (10, 0.0)
    assert pacer.dropped_s == 0.0
    clock.now += 5.0  # then a callback blocked for 5 s: only the last 0.5 s is caught up
    assert pacer.plan(sim_time=0.2, last_step_s=0.0) == (10, 0.0)
    assert pacer.dropped_s == pytest.approx(5.3 - 0.2 - 0.5)
    for sim_time in (0.3, 0.4, 0.5, 0.6):
        assert pacer.plan(sim_time=sim_time, last_step_s=0.0)[0] == 10
    steps, _ = pacer.plan(sim_time=0.7, last_step_s=0.0)  # caught up: back on schedule
    assert steps in (0, 1)


def test_pacer_sleeps_when_ahead_scaled_by_rtf() -> None:
    clock = Clock()
    pacer = Pacer(timestep=0.01, target_rtf=4.0, max_steps_per_frame=10, clock=clock)
    pacer.start(sim_time=0.0)
    steps, sleep = pacer.plan(sim_time=0.4, last_step_s=0.01)  # 0.4 s ahead at 4x = 0.1 s wall
    assert steps == 0 and sleep == pytest.approx(0.1 - 0.01)
    assert pacer.plan(sim_time=0.001, last_step_s=0.01) == (1, 0.0)  # almost due: step, don't spin


def test_pacer_rebases_so_there_is_no_catch_up() -> None:
    clock = Clock()
    pacer = Pacer(timestep=0.01, target_rtf=1.0, max_steps_per_frame=10, clock=clock)
    pacer.start(sim_time=0.0)
    clock.now += 60.0  # a long pause
    pacer.start(sim_time=0.0)  # resume re-bases
    assert pacer.plan(sim_time=0.0, last_step_s=0.0) == (1, 0.0)


def test_rtf_zero_never_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Pacer(0.01, 0.0, 10).plan(1e9, 0.0) == (10, 0.0)
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    with make_sim(target_rtf=0) as sim:
        spawn_box(sim)
        sim.run_simulation(duration=2.0)
        assert sim.step_count == 200
    assert sleeps == []


def test_rtf_two_runs_twice_real_time() -> None:
    with make_sim(target_rtf=2.0) as sim:
        spawn_box(sim)
        t0 = time.perf_counter()
        sim.run_simulation(duration=1.0)
        wall = time.perf_counter() - t0
        assert sim.sim_time == pytest.approx(1.0)
        assert 0.35 < wall < 0.9, wall


def test_run_simulation_twice_and_duration_from_params() -> None:
    with make_sim(target_rtf=0, duration=0.5) as sim:
        sim.run_simulation()
        sim.run_simulation()
        assert sim.step_count == 100 and sim.sim_time == pytest.approx(1.0)
        sim.run_simulation(0.25)
        assert sim.step_count == 125
        with pytest.raises(ConfigError, match="duration"):
            sim.run_simulation(-1)


def test_stop_ends_an_open_ended_run() -> None:
    with make_sim(target_rtf=0) as sim:
        sim.register_callback(lambda s, dt: s.stop() if s.step_count == 42 else None)
        sim.run_simulation()  # duration None: until stop()
        assert sim.step_count == 43


def test_pause_resume_is_continuous_and_idle() -> None:
    with make_sim(target_rtf=1.0) as sim:
        spawn_box(sim)
        samples: list[tuple[float, float]] = []
        marks: dict[str, float] = {}
        sim.on("post_step", lambda s, dt: samples.append((time.perf_counter(), s.sim_time)))

        def on_paused(s: MultiRobotSimulationCore) -> None:
            marks["pause_wall"], marks["pause_cpu"] = time.perf_counter(), time.process_time()
            threading.Timer(0.5, s.resume).start()

        def on_resumed(s: MultiRobotSimulationCore) -> None:
            marks["resume_wall"], marks["resume_cpu"] = time.perf_counter(), time.process_time()

        sim.on("paused", on_paused)
        sim.on("resumed", on_resumed)
        sim.register_callback(lambda s, dt: s.pause() if s.step_count == 30 else None)
        t0 = time.perf_counter()
        sim.run_simulation(duration=1.0)
        wall = time.perf_counter() - t0

        assert sim.sim_time == pytest.approx(1.0) and not sim.is_paused
        assert 1.3 < wall < 2.2, wall  # 1 s of simulation plus the 0.5 s pause
        paused_for = marks["resume_wall"] - marks["pause_wall"]
        assert paused_for >= 0.45
        assert marks["resume_cpu"] - marks["pause_cpu"] < 0.1 * paused_for  # blocked, not spinning
        # No catch-up burst: 0.2 s of wall time after resuming advances about 0.2 s of sim time.
        after = [(w, t) for w, t in samples if w >= marks["resume_wall"]]
        window = [t for w, t in after if w <= marks["resume_wall"] + 0.2]
        assert window[-1] - after[0][1] < 0.3


def test_stop_takes_effect_promptly_even_during_long_sleeps() -> None:
    with make_sim(target_rtf=0.1, timestep=0.5) as sim:  # one step per 5 s of wall time
        threading.Timer(0.2, sim.stop).start()
        t0 = time.perf_counter()
        sim.run_simulation(duration=10.0)
        assert time.perf_counter() - t0 < 1.0
        assert sim.step_count == 1


def test_run_simulation_frame_and_final_callbacks() -> None:
    with make_sim(timestep=0.1, target_rtf=0, max_steps_per_frame=4) as sim:
        frames: list[float] = []
        final: list[float] = []
        sim.run_simulation(
            1.0,
            update_callback=lambda s, dt: frames.append(dt),
            final_callback=lambda s, dt: final.append(dt),
        )
        assert sum(frames) == pytest.approx(1.0) and frames[0] == pytest.approx(0.4)
        assert final == [pytest.approx(1.0)]
        # The seed's positional form: run_simulation(update_callback, final_callback).
        sim.params.duration = 0.5
        sim.run_simulation(lambda s, dt: frames.append(dt), lambda s, dt: final.append(dt))
        assert final[-1] == pytest.approx(0.5) and sim.sim_time == pytest.approx(1.5)
        with pytest.raises(ConfigError, match="final_callback must be callable"):
            sim.run_simulation(1.0, final_callback=3)  # type: ignore[arg-type]


def test_final_callback_runs_after_an_error() -> None:
    with make_sim(timestep=0.1, target_rtf=0) as sim:
        final: list[float] = []

        def bad(s: MultiRobotSimulationCore, dt: float) -> None:
            if s.sim_time > 0.25:
                raise RuntimeError("frame bug")

        with pytest.raises(RuntimeError, match="frame bug"):
            sim.run_simulation(
                5.0, update_callback=bad, final_callback=lambda s, dt: final.append(dt)
            )
        assert len(final) == 1 and 0.25 < final[0] < 5.0


def test_run_simulation_on_a_paused_simulation_warns_and_waits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with make_sim(timestep=0.1, target_rtf=0) as sim:
        sim.pause()
        timer = threading.Timer(0.3, sim.resume)
        timer.start()
        with caplog.at_level("WARNING", logger="fleetsim"):
            sim.run_simulation(0.5)
        timer.join()
        assert "paused simulation waits for resume()" in caplog.text
        assert sim.sim_time == pytest.approx(0.5)
