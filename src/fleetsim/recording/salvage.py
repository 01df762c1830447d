"""`Salvaged`: what can be read of an MCAP recording cut short.

A run killed with SIGKILL (or by the OOM killer) leaves a file without its summary and footer,
and usually with half a chunk at the end. The indexed reader cannot open such a file; this one
reads it from the start, record by record, as far as the records are whole, and keeps the
schemas, channels, metadata and messages found. It answers the few questions `Recording` asks
of a reader (`iter_messages`, `get_summary`, `iter_metadata`), and says how much it read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any


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
        from mcap.stream_reader import StreamReader

        self._summary = _Summary()
        self._metadata: list[Any] = []
        self._messages: list[Any] = []
        self.complete = False  # the file ended where it should (a footer was read)
        file.seek(0)
        try:
            for record in StreamReader(file, skip_magic=False).records:
                if isinstance(record, Message):
                    self._messages.append(record)
                elif isinstance(record, Schema):
                    self._summary.schemas[record.id] = record
                elif isinstance(record, Channel):
                    self._summary.channels[record.id] = record
                elif isinstance(record, Metadata):
                    self._metadata.append(record)
            self.complete = True
        except Exception:  # the first record that is not whole ends the reading
            pass
        self._messages.sort(key=lambda m: m.log_time)

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
