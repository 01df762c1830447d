"""`McapOut`: an MCAP file written by a thread of its own.

The simulation thread hands over message bytes (or a function that makes them from a snapshot
it took) and goes on; the writer thread owns the
`mcap` writer: it registers channels as topics first appear, adds messages, compresses chunks
with zstd and writes them (compression and writing release the GIL, so on two cores they cost
the simulation little). At most `MAX_PENDING` messages wait: a writer that falls behind slows
the simulation down instead of filling memory. An error on the writer's side (a full disk) is
raised on the simulation's side at the next message or at `close()`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.recording import schemas

MAX_PENDING = 256
PROFILE = "fleetsim"

# (topic, schema name, schema encoding, schema bytes, log time ns, data); None ends the file.
# `data` may be a function that makes the bytes: it is called on the writer's thread.
Data = bytes | Callable[[], bytes]
Job = tuple[str, str, str, bytes, int, Data] | None


class McapOut:
    def __init__(self, path: Path, metadata: dict[str, str]) -> None:
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise FleetSimError(schemas.NEEDS) from None
        try:
            self._file = path.open("wb")
        except OSError as exc:
            raise ConfigError(f"--record {path}: {exc.strerror or exc}") from None
        self.path = path
        self._writer: Any = Writer(self._file, compression=CompressionType.ZSTD)
        self._writer.start(profile=PROFILE, library="fleetsim")
        self._writer.add_metadata("fleetsim", metadata)
        self._jobs: queue.Queue[Job] = queue.Queue(MAX_PENDING)
        self._error: BaseException | None = None
        self._channels: dict[str, int] = {}
        self._sequence = 0
        self._thread = threading.Thread(target=self._run, name="fleetsim-recorder", daemon=True)
        self._thread.start()

    def message(self, topic: str, schema_name: str, encoding: str, schema: bytes, time_ns: int,
                data: Data) -> None:  # fmt: skip
        self._raise()
        self._jobs.put((topic, schema_name, encoding, schema, time_ns, data))

    def close(self) -> None:
        """Write what is pending, finish the file (its summary and index) and close it."""
        if self._thread.is_alive():
            self._jobs.put(None)
            self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise FleetSimError(f"recording {self.path}: {error}") from error

    def _add(self, job: Any) -> None:
        topic, schema_name, encoding, schema, time_ns, data = job
        channel = self._channels.get(topic)
        if channel is None:
            schema_id = self._writer.register_schema(schema_name, encoding, schema)
            message_encoding = "protobuf" if encoding == "protobuf" else "json"
            channel = self._writer.register_channel(topic, message_encoding, schema_id)
            self._channels[topic] = channel
        if callable(data):
            data = data()
        self._writer.add_message(channel, log_time=time_ns, data=data,
                                 publish_time=time_ns, sequence=self._sequence)  # fmt: skip
        self._sequence += 1

    def _run(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                self._add(job)
            self._writer.finish()
        except BaseException as exc:  # handed to the simulation's thread
            self._error = exc
            while self._jobs.get() is not None:  # let the simulation side finish
                pass
        finally:
            self._file.close()
