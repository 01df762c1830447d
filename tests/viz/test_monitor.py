"""The data monitor's figures against runs with known real-time factors."""

import threading

import pytest

from fleetsim import Agent, Pose
from fleetsim.viz.monitor import DataMonitor, MonitorFigures, make_view

from ..conftest import make_sim, spawn_box


def test_figures_match_a_run_at_a_known_real_time_factor() -> None:
    with make_sim(target_rtf=2.0, timestep=0.01) as sim:
        robot = Agent.from_urdf("simple_cube", sim_core=sim)
        robot.set_goal(Pose.from_xyz(50, 0, 0))
        spawn_box(sim, (0.2, 0, 0.5))  # touching the robot at the start
        monitor = DataMonitor(sim, period_s=0.05, view="none").start()
        sim.run_simulation(duration=1.5)
        figures = monitor.figures()
        monitor.stop()
        assert figures.sim_time == pytest.approx(1.5)
        assert figures.actual_rtf == pytest.approx(2.0, rel=0.25)
        assert figures.target_rtf == 2.0 and figures.moving_robots == 1
        assert figures.collision_episodes == 1 and figures.step_ms > 0
        assert monitor.last is not None  # sampled during the run


def test_paused_time_does_not_count() -> None:
    with make_sim(target_rtf=1.0, timestep=0.01) as sim:
        monitor = DataMonitor(sim, view="none").start()
        sim.register_callback(lambda s, dt: s.pause() if s.step_count == 20 else None)
        threading.Timer(0.6, sim.resume).start()
        sim.run_simulation(duration=0.5)
        assert monitor.figures().actual_rtf == pytest.approx(1.0, rel=0.3)


def test_views() -> None:
    assert make_view("none") is None
    terminal = make_view("terminal")
    assert terminal is not None
    figures = MonitorFigures(1.0, 0.5, 0.0, 2.0, 0.1, 3, 1, 4, False)
    terminal.show(figures)
    terminal.close()
    assert dict(figures.rows())["target RTF"] == "max"
