"""A build draws nothing until it is done: the GUI's rendering is turned off once, for the whole
build, however many of its steps (the site's walls, a batch of robots) ask for it too. (When a
step turned it back on, every robot after the site loaded drawn: the warehouse took 9 s to build
in the GUI instead of 1.3 s.)"""

from __future__ import annotations

import pytest

from fleetsim import MultiRobotSimulationCore, SimulationParams
from fleetsim.backend.client import Backend
from fleetsim.scenario import build, load_scenario
from fleetsim.site.layouts import warehouse_layout


@pytest.fixture
def switched(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every rendering switch made, in order (DIRECT mode records them as the GUI would)."""
    calls: list[bool] = []
    monkeypatch.setattr(Backend, "set_rendering", lambda self, on: calls.append(on))
    return calls


def test_a_scenario_with_a_site_is_built_undrawn_to_the_end(switched: list[bool]) -> None:
    run = build(load_scenario("warehouse"))
    try:
        assert len(run.scene.robots) > 0 and run.sim.site is not None
        assert switched == [False, True]  # off once, on once, at the end
    finally:
        run.sim.close()


def test_blocks_nest_and_an_error_turns_drawing_back_on(switched: list[bool]) -> None:
    with MultiRobotSimulationCore(SimulationParams(target_rtf=0)) as sim:
        backend = sim.world.backend
        with pytest.raises(RuntimeError), backend.undrawn():
            sim.set_site(warehouse_layout(aisles=2))  # undrawn inside, nested
            assert switched == [False]
            raise RuntimeError("a failed build step")
        assert switched == [False, True]
        with backend.undrawn():
            pass
        assert switched == [False, True, False, True]  # usable again


def test_a_batch_of_boxes_is_made_undrawn(switched: list[bool]) -> None:
    """Static boxes made outside a build (a replay's scene, a site set by hand) are made
    undrawn too: in the GUI, drawing each as it came took seconds (a replay of crate_shuttle
    opened in 8.6 s, now 1.9 s)."""
    import numpy as np

    with MultiRobotSimulationCore(SimulationParams(target_rtf=0)) as sim:
        backend = sim.world.backend
        half, at = np.full((3, 3), 0.5), np.arange(9.0).reshape(3, 3)
        ids = backend.create_boxes(half, at, np.tile([0, 0, 0, 1.0], (3, 1)), (1, 1, 1, 1))
        assert len(ids) == 3 and switched == [False, True]
