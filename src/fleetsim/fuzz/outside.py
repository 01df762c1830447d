"""Fuzzing a fleet manager that is not fleetsim's: a command `fleetsim fuzz` starts for each run,
after serving the run's robots to it (a VDA 5050 broker of the run's own, or the Open-RMF API on
a free port), all on 127.0.0.1. The command's placeholders: `{broker}` (mqtt://127.0.0.1:PORT),
`{url}` (the RMF API's base URL), `{host}`, `{port}`, `{folder}` (the run's folder, for its
files; the command's output goes to `manager.log` there) and `{seed}`. The run paces at `rtf`
times real time (the manager lives in wall time), and the command is stopped at its end.

Runs repeat exactly only when the manager does: fleetsim's side is seeded, the manager's timing
is its own.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.scenario.builder import ScenarioRun

INTERFACES = ("vda5050", "rmf")
PLACEHOLDERS = ("broker", "url", "host", "port", "folder", "seed")
STOP_S = 5.0  # a manager gets this long after SIGTERM before SIGKILL
SETTLE_S = 1.0  # wall seconds a manager gets to connect before the run starts


@dataclass(frozen=True)
class OutsideManager:
    """A fleet manager run as `command` (see the module's placeholders) over `interface`."""

    command: str
    interface: str = "vda5050"
    rtf: float = 1.0

    def __post_init__(self) -> None:
        if self.interface not in INTERFACES:
            raise ConfigError(f"--interface {self.interface}: choose {' or '.join(INTERFACES)}")
        if not (self.rtf > 0):
            raise ConfigError(f"--rtf {self.rtf}: an outside manager needs a pace > 0")
        try:
            words = shlex.split(self.command)
            words = [w.format(**dict.fromkeys(PLACEHOLDERS, "x")) for w in words]
        except (ValueError, KeyError, IndexError) as exc:
            names = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise ConfigError(f"--manager: {exc}; placeholders: {names}") from None
        if not words:
            raise ConfigError("--manager: an empty command")
        program = words[0]
        found = (
            shutil.which(program)
            if os.sep not in program
            else (program if os.access(program, os.X_OK) else None)
        )
        if found is None:
            raise ConfigError(
                f"--manager: no program {program!r} (not on PATH, or not "
                "executable): give the command as you would type it"
            )

    @contextlib.contextmanager
    def serving(self, run: ScenarioRun, folder: Path, seed: int | None) -> Iterator[None]:
        """Serve the run's robots, start the command, and stop both at the end."""
        folder.mkdir(parents=True, exist_ok=True)
        with self._interface(run) as where:
            values = {**where, "folder": str(folder), "seed": str(seed)}
            argv = [w.format(**values) for w in shlex.split(self.command)]
            with open(folder / "manager.log", "wb") as log:
                proc = subprocess.Popen(
                    argv, cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
                try:
                    time.sleep(SETTLE_S)
                    if proc.poll() is not None:
                        log.flush()
                        said = _tail(folder / "manager.log")
                        raise FleetSimError(
                            f"the manager exited at once (code {proc.returncode}"
                            f"){said}; see {folder / 'manager.log'}"
                        )
                    yield
                finally:
                    _stop(proc)

    @contextlib.contextmanager
    def _interface(self, run: ScenarioRun) -> Iterator[dict[str, str]]:
        sim, robots = run.sim, run.scene.robots
        if self.interface == "vda5050":
            from fleetsim.interfaces.vda5050.broker import EmbeddedBroker  # (an extra)
            from fleetsim.interfaces.vda5050.fleet import VdaFleet

            with EmbeddedBroker() as broker:
                fleet = VdaFleet(sim, robots, broker.url, epoch=0.0).start()
                try:
                    yield {
                        "broker": broker.url,
                        "url": "",
                        "host": broker.host,
                        "port": str(broker.port),
                    }
                finally:
                    fleet.stop()
        else:
            from fleetsim.interfaces.rmf.fleet import RmfFleet  # (an extra)
            from fleetsim.interfaces.rmf.server import RmfServer, make_app

            rmf = RmfFleet(sim, robots).start()
            try:
                with RmfServer(make_app(rmf)) as server:
                    yield {
                        "broker": "",
                        "url": server.url,
                        "host": server.host,
                        "port": str(server.port),
                    }
            finally:
                rmf.stop_serving()


def _tail(log: Path, lines: int = 3) -> str:
    """The last lines a program wrote, for an error message (empty when it wrote nothing)."""
    try:
        text = log.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return f": {' | '.join(text)}" if text else ""


def _stop(proc: Any) -> None:
    """SIGTERM to the manager's process group, SIGKILL if it is still there after `STOP_S`."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
