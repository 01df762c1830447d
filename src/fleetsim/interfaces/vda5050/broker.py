"""MQTT brokers for VDA 5050 vehicles, both bound to 127.0.0.1 unless told otherwise (port 0
takes a free one):

- `EmbeddedBroker`: amqtt (pure Python) in a thread of its own, so a user needs nothing but
  `pip install "fleetsim[vda5050]"`;
- `MosquittoBroker`: Debian's `mosquitto` as a child process with a config of its own (and a
  password file when given a user), for large fleets, tests and benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fleetsim.errors import FleetSimError
from fleetsim.interfaces.serving import free_port

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
ANONYMOUS = "amqtt.plugins.authentication.AnonymousAuthPlugin"


class EmbeddedBroker:
    """An MQTT broker (amqtt) in a thread of this process, on 127.0.0.1 and a free port, for tests
    and for `fleetsim vda5050` without a broker of your own."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broker: Any = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """`mqtt://127.0.0.1:PORT`."""
        return f"mqtt://{self.host}:{self.port}"

    def start(self) -> EmbeddedBroker:
        """Start serving; returns once it accepts connections."""
        try:
            from amqtt.broker import Broker
        except ImportError:
            raise FleetSimError(
                'the embedded MQTT broker needs amqtt: pip install "fleetsim[vda5050]"'
            ) from None
        for name in ("amqtt", "transitions"):  # its own chatter is not the user's business
            logging.getLogger(name).setLevel(logging.ERROR)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }

        def serve() -> None:
            loop = self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            try:
                self._broker = Broker(config, loop=loop)
                loop.run_until_complete(self._broker.start())
            except BaseException as exc:  # reported by start() in the caller's thread
                self._error = exc
                self._ready.set()
                return
            self._ready.set()
            loop.run_forever()
            # Free the port first (amqtt's shutdown waits on its clients and may take long),
            # then shut down with a time limit.
            for server in getattr(self._broker, "_servers", {}).values():
                instance = getattr(server, "instance", None)
                if instance is not None:
                    instance.close()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.wait_for(self._broker.shutdown(), STOP_TIMEOUT_S))
            loop.close()

        self._thread = threading.Thread(target=serve, name="fleetsim-mqtt-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._error is not None:
            raise FleetSimError(
                f"the embedded MQTT broker did not start on {self.url}: "
                f"{self._error or 'timed out'}"
            )
        return self

    def stop(self) -> None:
        """Stop the broker and its thread."""
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT_S)
        self._thread = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class MosquittoBroker:
    """`mosquitto` on `host:port` for as long as the object lives (or the `with` block)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        username: str | None = None,
        password: str | None = None,
        tls: tuple[str, str] | None = None,
    ) -> None:
        self.host, self.port = host, port or free_port(host)
        self.credentials = (username, password)
        self.tls = tls  # (certificate file, key file): a TLS listener (mqtts://)
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    @staticmethod
    def available() -> bool:
        """Whether Debian's `mosquitto` is installed."""
        return _sbin("mosquitto") is not None

    @property
    def url(self) -> str:
        """`mqtt://127.0.0.1:PORT`."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def start(self) -> MosquittoBroker:
        """Start `mosquitto` on 127.0.0.1 and a free port; returns once it accepts connections."""
        exe = _sbin("mosquitto")
        if exe is None:
            raise FleetSimError("mosquitto is not installed (Debian: apt-get install mosquitto)")
        self._dir = tempfile.TemporaryDirectory(prefix="fleetsim-mosquitto-")
        folder = Path(self._dir.name)
        lines = [
            f"listener {self.port} {self.host}",
            "max_connections -1",
            "set_tcp_nodelay true",
            "persistence false",
            "log_dest stderr",
            "log_type error",
        ]
        user, password = self.credentials
        if user is not None:
            passwd = _sbin("mosquitto_passwd")
            if passwd is None:
                raise FleetSimError("mosquitto_passwd is not installed (it comes with mosquitto)")
            (folder / "passwd").touch(mode=0o600)
            subprocess.run(
                [passwd, "-b", str(folder / "passwd"), user, password or ""],
                check=True,
                capture_output=True,
            )
            lines += ["allow_anonymous false", f"password_file {folder / 'passwd'}"]
            _readable_by_mosquitto(folder, folder / "passwd")
        else:
            lines.append("allow_anonymous true")
        if self.tls is not None:
            for name, source in zip(("certfile", "keyfile"), self.tls, strict=True):
                shutil.copyfile(source, folder / name)
                _readable_by_mosquitto(folder, folder / name)
                lines.append(f"{name} {folder / name}")
        (folder / "mosquitto.conf").write_text("\n".join(lines) + "\n")
        with (folder / "log").open("wb") as log:  # the child keeps its own handle
            self._proc = subprocess.Popen(
                [exe, "-c", str(folder / "mosquitto.conf")], stdout=log, stderr=log
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            with socket.socket() as probe:
                if probe.connect_ex((self.host, self.port)) == 0:
                    return self
            time.sleep(0.05)
        said = (folder / "log").read_text(errors="replace")[-500:].strip()
        self.stop()
        raise FleetSimError(f"mosquitto did not start on {self.url}: {said or 'timed out'}")

    def stop(self) -> None:
        """Stop `mosquitto` and wait for it to end."""
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> MosquittoBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _sbin(program: str) -> str | None:
    """`program` on the PATH, or where Debian puts it (/usr/sbin is not on every user's PATH)."""
    return shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/local/sbin")


def _readable_by_mosquitto(folder: Path, secret: Path) -> None:
    """Started as root, mosquitto runs as the `mosquitto` user: let it read the password file."""
    if os.geteuid() != 0:
        return
    try:
        pwd.getpwnam("mosquitto")
    except KeyError:
        return
    folder.chmod(0o755)
    shutil.chown(secret, user="mosquitto")
