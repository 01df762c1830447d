"""`Salvaged`: what can be read of an MCAP recording cut short or damaged.

A run killed with SIGKILL (or by the OOM killer) leaves a file without its summary and footer,
and usually with half a chunk at the end; a file damaged on disk or in transfer has chunks
whose bytes are wrong (their CRC or compression fails). The indexed reader cannot read past
either; this one reads the file from the start, record by record (opcode, length, body): a
record that does not parse is skipped and counted (`damaged`), the reading goes on with the
next, and stops at a record that runs past the end (cut short). It keeps the schemas, channels,
metadata and messages found, answers the few questions `Recording` asks of a reader
(`iter_messages`, `get_summary`, `iter_metadata`), and says how much it read.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

MAGIC = b"\x89MCAP0\r\n"
FOOTER = 0x02


@dataclass
class _Summary:
    """The part of an MCAP summary `Recording` and the live view read."""

    schemas: dict[int, Any] = field(default_factory=dict)
    channels: dict[int, Any] = field(default_factory=dict)
    statistics: Any = None


class Salvaged:
    """What can be read from an MCAP file that was cut short (no footer): its schemas, channels,
    messages and metadata, by streaming it."""

    def __init__(self, file: IO[bytes]) -> None:
        from mcap.records import Channel, Message, Metadata, Schema

        self._summary = _Summary()
        self._metadata: list[Any] = []
        self._messages: list[Any] = []
        self.complete = False  # the file ended where it should (a footer was read)
        self.damaged = 0  # records that did not parse (bad bytes), skipped
        self.stopped_at: int | None = None  # where a record ran past the end, if one did
        file.seek(0, io.SEEK_END)
        size = file.tell()
        file.seek(0)
        if file.read(len(MAGIC)) != MAGIC:
            self.stopped_at = 0
            return
        while True:
            at = file.tell()
            top = file.read(9)
            if len(top) < 9:
                self.stopped_at = at if top else None  # (nothing after the last record)
                break
            opcode, length = top[0], int.from_bytes(top[1:], "little")
            if at + 9 + length > size:
                self.stopped_at = at  # cut short here (or a length damaged: nothing after it)
                break
            body = file.read(length)
            if opcode == FOOTER:
                self.complete = True
                break
            for record in self._records(top + body):
                if isinstance(record, Message):
                    self._messages.append(record)
                elif isinstance(record, Schema):
                    self._summary.schemas[record.id] = record
                elif isinstance(record, Channel):
                    self._summary.channels[record.id] = record
                elif isinstance(record, Metadata):
                    self._metadata.append(record)
        self._messages.sort(key=lambda m: m.log_time)

    def _records(self, raw: bytes) -> list[Any]:
        """The records in one record's bytes (a chunk holds many); none, counted, when it is
        damaged."""
        from mcap.exceptions import EndOfFile
        from mcap.stream_reader import StreamReader

        out: list[Any] = []
        try:
            for record in StreamReader(io.BytesIO(raw), skip_magic=True,
                                       validate_crcs=True).records:  # fmt: skip
                out.append(record)
        except EndOfFile:  # (the one record read: the stream ends after it)
            return out
        except Exception:  # the mcap package and the decompressors raise their own kinds
            self.damaged += 1
            return []
        return out

    @property
    def message_count(self) -> int:
        """How many messages the readable part holds."""
        return len(self._messages)

    @property
    def end_ns(self) -> int:
        """The log time of the last readable message, ns."""
        return self._messages[-1].log_time if self._messages else 0

    def get_summary(self) -> _Summary:
        """A summary of the readable part, in the shape mcap's readers give."""
        return self._summary

    def iter_metadata(self) -> Iterator[Any]:
        """The metadata records of the readable part."""
        return iter(self._metadata)

    def iter_messages(
        self,
        topics: list[str] | None = None,
        starting_at: int | None = None,
        ending_before: int | None = None,
    ) -> Iterator[tuple[Any, Any, Any]]:
        """(schema, channel, message) in log-time order, as the indexed reader gives them."""
        wanted = set(topics) if topics else None
        channels, schemas = self._summary.channels, self._summary.schemas
        for message in self._messages:
            if starting_at is not None and message.log_time < starting_at:
                continue
            if ending_before is not None and message.log_time >= ending_before:
                break
            channel = channels.get(message.channel_id)
            if channel is None or (wanted is not None and channel.topic not in wanted):
                continue
            yield schemas.get(channel.schema_id), channel, message
