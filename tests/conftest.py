"""Shared fixtures: real simulations in PyBullet DIRECT mode, and small real asset files."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _compile_once() -> None:
    """Under PYTHONDONTWRITEBYTECODE (set on some machines and CI images) every process the
    tests start (the CLI, workers, servers: hundreds) compiled all of fleetsim from source
    again, a fifth of the suite's time. The tests keep compiled modules in a cache of their own
    in the temporary directory instead (PEP 3147's prefix: nothing is written into the
    checkout), shared by every process they start."""
    if not sys.dont_write_bytecode:
        return
    import tempfile

    prefix = Path(tempfile.gettempdir()) / f"fleetsim-test-pycache-{os.getuid()}"
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_compile_once()

from fleetsim import (  # noqa: E402  (after the bytecode cache is set up)
    MultiRobotSimulationCore,
    Pose,
    ShapeParams,
    SimObject,
    SimObjectSpawnParams,
    SimulationParams,
)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker more than the machine has cores. Many tests spend part of their time
    waiting (on a server, a broker, a subprocess starting), and the extra worker fills those
    waits: on 2 cores, 3 workers finish the suite in less time than 2."""
    return (os.cpu_count() or 1) + 1


CUBE_OBJ = """\
# unit cube centred on the origin
v -0.5 -0.5 -0.5
v 0.5 -0.5 -0.5
v 0.5 0.5 -0.5
v -0.5 0.5 -0.5
v -0.5 -0.5 0.5
v 0.5 -0.5 0.5
v 0.5 0.5 0.5
v -0.5 0.5 0.5
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
"""


@pytest.fixture
def cube_obj(tmp_path: Path) -> Path:
    path = tmp_path / "cube.obj"
    path.write_text(CUBE_OBJ)
    return path


def make_sim(**overrides: object) -> MultiRobotSimulationCore:
    params = {"target_rtf": 0.0, "timestep": 0.01, **overrides}
    return MultiRobotSimulationCore(SimulationParams.from_dict(params))


@pytest.fixture
def sim() -> Iterator[MultiRobotSimulationCore]:
    with make_sim() as s:
        yield s


@pytest.fixture(params=["eager", "lazy"])
def any_sync_sim(request: pytest.FixtureRequest) -> Iterator[MultiRobotSimulationCore]:
    with make_sim(pose_sync=request.param) as s:
        yield s


BoxFactory = Callable[..., SimObject]


def spawn_box(
    sim: MultiRobotSimulationCore,
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.5),
    half: float = 0.25,
    **kwargs: object,
) -> SimObject:
    params = SimObjectSpawnParams(
        visual_shape=ShapeParams("box", half_extents=(half, half, half)),
        initial_pose=Pose.from_xyz(*xyz),
        **kwargs,  # type: ignore[arg-type]
    )
    return SimObject.from_params(params, sim_core=sim)


def fleetsim(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """The real `fleetsim` command (this interpreter's), in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def scenario(tmp_path: Path, body: str, name: str = "scenario.yaml") -> Path:
    """A scenario file written from (indented) YAML text."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path
