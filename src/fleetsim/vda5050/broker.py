"""`EmbeddedBroker`: an MQTT broker (amqtt, pure Python) in a thread of its own, so a user needs
nothing but `pip install "fleetsim[vda5050]"`. It binds to 127.0.0.1 unless told otherwise;
port 0 takes a free one. For large fleets use Mosquitto and `--broker`."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

from fleetsim.errors import FleetSimError

START_TIMEOUT_S = 10.0
ANONYMOUS = "amqtt.plugins.authentication.AnonymousAuthPlugin"


class EmbeddedBroker:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or _free_port(host)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broker: Any = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def start(self) -> EmbeddedBroker:
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
            loop.run_until_complete(self._broker.shutdown())
            loop.close()

        self._thread = threading.Thread(target=serve, name="fleetsim-mqtt-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._error is not None:
            raise FleetSimError(f"the embedded MQTT broker did not start on {self.url}: "
                                f"{self._error or 'timed out'}")  # fmt: skip
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT_S)
        self._thread = None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
