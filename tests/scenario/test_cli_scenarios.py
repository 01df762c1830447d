"""Scenario files through the real `fleetsim` command, in subprocesses."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fleetsim.scenario import bundled_scenarios

from ..conftest import fleetsim, scenario


@pytest.mark.parametrize(
    ("name", "duration"),
    [
        ("warehouse", "20"),
        ("arm_cell", "2"),
        ("fleet_10k", "20"),
        ("site_warehouse", "20"),
        ("grid_warehouse", "20"),
        ("crate_shuttle", "20"),
        ("warehouse_shift", "20"),
    ],
)
def test_bundled_scenarios_validate_and_run(name: str, duration: str) -> None:
    assert name in bundled_scenarios()
    checked = fleetsim("validate", name)
    assert checked.returncode == 0, checked.stderr
    result = fleetsim("run", name, "--duration", duration)
    assert result.returncode == 0, result.stderr
    assert "(200 steps)" in result.stdout
    by_manager = "actions           │ none queued (the fleet manager drives" in result.stdout
    assert "actions failed    │ 0" in result.stdout or by_manager
    if name != "fleet_10k":  # the demos are collision-free; the 10k stress test is not
        assert "│ collisions        │ 0 (" in result.stdout


RECORDER = """
from pathlib import Path
from fleetsim.scenario import Plugin

LOG = Path(__file__).with_name("hooks.log")

class Recorder(Plugin):
    def _log(self, hook):
        owner = self.robot.name if self.robot is not None else "world"
        with LOG.open("a") as f:
            f.write(f"{owner} {hook}\\n")
    def on_plugin_load(self, robot):
        super().on_plugin_load(robot)
        self._log("on_plugin_load")
    def set_up_scene(self, scene):
        super().set_up_scene(scene)
        self._log("set_up_scene")
    def initialize(self):
        self._log("initialize")
    def pre_physics_step(self, dt):
        self._log("pre_physics_step")
    def on_physics_step(self, dt):
        self._log("on_physics_step")
    def on_render(self):
        self._log("on_render")
    def on_shutdown(self):
        self._log("on_shutdown")

class Broken(Plugin):
    def on_physics_step(self, dt):
        raise RuntimeError("sensor unplugged")
"""


def test_hook_order_is_seed_003(tmp_path: Path) -> None:
    (tmp_path / "recorder.py").write_text(RECORDER)
    path = scenario(
        tmp_path,
        """
        simulation: {timestep: 0.1, physics_dt: 0.1, render_dt: 0.2, target_rtf: 0, duration: 0.2}
        robots:
          - name: r
            model: simple_cube
            grid: {count: 2, spacing: 2.0}
            plugins: [{class: "recorder:Recorder"}]
        plugins: [{class: "recorder.Recorder"}]
    """,
    )
    result = fleetsim("run", str(path))  # recorder.py is found next to the scenario
    assert result.returncode == 0, result.stderr
    assert "pybullet build time" not in result.stderr + result.stdout
    log = (tmp_path / "hooks.log").read_text().split("\n")[:-1]
    loading = [
        "r_0 on_plugin_load",
        "r_1 on_plugin_load",
        "world on_plugin_load",
        "r_0 set_up_scene",
        "r_1 set_up_scene",
        "world set_up_scene",
        "r_0 initialize",
        "r_1 initialize",
        "world initialize",
    ]
    assert log[:9] == loading
    step = [
        "r_0 pre_physics_step",
        "r_1 pre_physics_step",
        "world pre_physics_step",
        "r_0 on_physics_step",
        "r_1 on_physics_step",
        "world on_physics_step",
        "r_0 on_render",
        "r_1 on_render",
        "world on_render",
    ]
    second = [e for e in step if "render" not in e]  # render_dt 0.2 = every other step
    assert log[9:] == step + second + ["r_0 on_shutdown", "r_1 on_shutdown", "world on_shutdown"]


def test_a_failing_plugin_is_named_and_the_others_shut_down(tmp_path: Path) -> None:
    (tmp_path / "recorder.py").write_text(RECORDER)
    path = scenario(
        tmp_path,
        """
        simulation: {timestep: 0.1, target_rtf: 0, duration: 1.0}
        robots:
          - {name: good, model: simple_cube, plugins: [{class: "recorder:Recorder"}]}
          - {name: bad, model: simple_cube, pose: [3, 0, 0], plugins: [{class: "recorder:Broken"}]}
    """,
    )
    result = fleetsim("run", str(path), env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1
    assert (
        "plugin 'Broken' on bad failed in on_physics_step(): RuntimeError: sensor unplugged"
        in result.stderr
    )
    assert (tmp_path / "hooks.log").read_text().splitlines()[-1] == "good on_shutdown"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "robots:\n  - model: simple_cube\n    grid: {count: 2, spacng: 1.0}\n",
            "line 3: robots[0].grid.spacng: unknown key 'spacng': did you mean 'spacing'?",
        ),
        ("simulation:\n  timestep: fast\n", "simulation.timestep: Input should be a valid number"),
        (
            "robots:\n  - model: simple_cub\n",
            "robots[0] (model simple_cub): unknown robot model 'simple_cub'; "
            "did you mean 'simple_cube'",
        ),
        (
            "robots:\n  - model: simple_cube\n    plugins: [{type: patrl}]\n",
            "robots[0].plugins[0]: unknown plugin type 'patrl': did you mean 'patrol'?",
        ),
        (
            "objects:\n  - shape: {type: mesh, mesh: missing.obj}\n",
            "objects[0]: mesh file not found: ",
        ),
        ("environment:\n  files: [{path: nowhere.urdf}]\n", "environment.files[0] (nowhere.urdf)"),
        (
            "robots:\n  - model: simple_cube\n"
            "    plugins: [{type: patrol, params: {waypoint: []}}]\n",
            "robots[0].plugins[0].params",
        ),
        (
            "robots:\n  - {model: arm_robot, use_fixed_base: true,"
            " actions: [{type: wait, duration: 1}, {type: move_to, pose: [1, 0, 0]}]}\n",
            "robots[0].actions[1] (move_to): arm_robot_0 (arm) has a fixed base and cannot drive",
        ),
        (
            "objects: [{name: crate, shape: {type: box}}]\n"
            "robots:\n  - {model: mobile_robot, actions: [{type: pick, object: crat}]}\n",
            "robots[0].actions[0] (pick): no object named 'crat'; did you mean 'crate'?",
        ),
        (
            "robots:\n  - {model: mobile_robot, actions: [{type: joints, targets: [0.1]}]}\n",
            "robots[0].actions[0] (joints): mobile_robot_0 (mobile) has no arm joints to move",
        ),
    ],
)
def test_broken_scenarios_exit_2_with_the_key_path(tmp_path: Path, body: str, message: str) -> None:
    result = fleetsim("run", str(scenario(tmp_path, body)))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert fleetsim("validate", str(tmp_path / "scenario.yaml")).returncode == 2


def test_set_overrides_and_unknown_scenario(tmp_path: Path) -> None:
    result = fleetsim(
        "run", "warehouse", "--set", "simulation.duration=1.0", "--set", "robots[0].start.random=3"
    )
    assert result.returncode == 0, result.stderr
    assert "robots            │ 3" in result.stdout and "(10 steps)" in result.stdout
    missing = fleetsim("run", "warehous")
    assert missing.returncode == 2 and "did you mean 'warehouse'" in missing.stderr


def test_schema_and_examples(tmp_path: Path) -> None:
    schema = json.loads(fleetsim("schema").stdout)
    assert {"simulation", "robots", "objects", "plugins", "environment"} <= set(
        schema["properties"]
    )
    listing = fleetsim("examples")
    assert "warehouse" in listing.stdout and "fleet_10k" in listing.stdout
    copied = fleetsim("examples", "copy", "arm_cell", "--to", str(tmp_path))
    assert copied.returncode == 0 and (tmp_path / "arm_cell.yaml").is_file()
    assert fleetsim("validate", str(tmp_path / "arm_cell.yaml")).returncode == 0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("signum", "label"),
    [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")],
)
def test_stop_signals_end_cleanly_with_a_summary_and_shutdown(
    tmp_path: Path, signum: int, label: str
) -> None:
    (tmp_path / "recorder.py").write_text(RECORDER)
    path = scenario(
        tmp_path,
        """
        simulation: {timestep: 0.1, target_rtf: 1, duration: 600}
        robots: [{name: r, model: simple_cube, plugins: [{class: "recorder:Recorder"}]}]
    """,
    )
    # Started the way a shell starts a background job (SIGINT ignored): Ctrl-C must still work.
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "run", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    log = tmp_path / "hooks.log"
    deadline = time.monotonic() + 60
    while "on_physics_step" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert f"stopped           │ by {label}" in out
    assert log.read_text().splitlines()[-1] == "r on_shutdown"


def test_the_demo_reports_collisions_by_kind_and_fail_on_makes_them_fatal() -> None:
    clear = fleetsim("run", "crate_shuttle", "--duration", "60", "--fail-on", "collisions")
    assert clear.returncode == 0, clear.stderr
    assert "collisions        │ 0 (robot-robot 0, robot-structure 0, robot-load 0," in clear.stdout
    # Squeeze the robots' lanes together: now they do drive into each other and the rails.
    squeezed = fleetsim(
        "run",
        "crate_shuttle",
        "--duration",
        "30",
        "--set",
        "robots[0].grid.spacing=0.5",
        "--fail-on",
        "robot-collisions,failed-actions",
    )
    assert squeezed.returncode == 1
    assert "robot-robot collisions" in squeezed.stderr
    line = next(x for x in squeezed.stdout.splitlines() if "robot-robot" in x)
    assert "robot-robot 0," not in line and "robot-structure 0," not in line
    bad = fleetsim("run", "warehouse", "--fail-on", "colisions")
    assert bad.returncode == 2 and "did you mean 'collisions'?" in bad.stderr


def test_failed_actions_are_grouped_by_reason(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        """
        simulation: {timestep: 0.1, target_rtf: 0, duration: 3.0}
        robots:
          - name: r
            model: mobile_robot
            grid: {count: 3, spacing: 2.0}
            actions: [{type: pick, position: [30, 0, 0.2]}]
            repeat: true
    """,
    )
    result = fleetsim("run", str(path), "--fail-on", "failed-actions")
    assert result.returncode == 1 and "failed actions" in result.stderr
    # Each robot fails once at start and again after each 1 s retry: 3 robots x 3 rounds.
    assert "actions failed    │ 9" in result.stdout
    assert "9 x Pick: no pickable object within 0.5 m of (30.00, 0.00, 0.20)" in result.stdout
