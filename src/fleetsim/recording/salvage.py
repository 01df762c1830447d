"""`Salvaged`: what can be read of an MCAP recording cut short or damaged.

A run killed with SIGKILL (or by the OOM killer) leaves a file without its summary and footer,
and usually with half a chunk at the end; a file damaged on disk or in transfer has chunks
whose bytes are wrong (their CRC or compression fails). The indexed reader cannot read past
either; this one reads the file from the start, record by record (opcode, length, body): a
record that does not parse is skipped and counted (`damaged`), the reading goes on with the
next (a record whose length is damaged: with the next chunk), and stops at a record that runs
past the end with nothing whole after it (cut short). It keeps the schemas, channels,
metadata and messages found, answers the few questions `Recording` asks of a reader
(`iter_messages`, `get_summary`, `iter_metadata`), and says how much it read.
"""

from __future__ import annotations

import bisect
import io
import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

MAGIC = b"\x89MCAP0\r\n"
FOOTER, CHUNK = 0x02, 0x06
OPCODES = frozenset(range(0x01, 0x10))  # the MCAP records fleetsim's writer and mcap write


def _whole(file: IO[bytes]) -> Any:
    """The file's bytes: mapped, not read, where it is a file on disk."""
    try:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, io.UnsupportedOperation):  # (empty, or not a real file)
        file.seek(0)
        return file.read()


def _end_of_record(data: Any, at: int) -> int | None:
    """Where the record at `at` ends, or None where its opcode is not MCAP's or its length
    runs past the end of the file."""
    if at + 9 > len(data) or data[at] not in OPCODES:
        return None
    end = at + 9 + int.from_bytes(data[at + 1 : at + 9], "little")
    return end if end <= len(data) else None


def _next_chunk(data: Any, start: int) -> int | None:
    """The first place from `start` that has a chunk's shape: the chunk opcode, a length that
    fits, and the end of the file or another whole record after it."""
    at = data.find(bytes([CHUNK]), start)
    while at != -1:
        end = _end_of_record(data, at)
        if end is not None and end > at + 9 and (end == len(data) or _end_of_record(data, end)):
            return int(at)
        at = data.find(bytes([CHUNK]), at + 1)
    return None


@dataclass
class _Summary:
    """The part of an MCAP summary `Recording` and the live view read."""

    schemas: dict[int, Any] = field(default_factory=dict)
    channels: dict[int, Any] = field(default_factory=dict)
    statistics: Any = None


class Salvaged:
    """What can be read from an MCAP file that was cut short (no footer) or damaged: its
    schemas, channels, messages and metadata, by streaming it.

    `chunk_starts` are where the file's summary says its chunks begin, when it has one: a
    record whose length is damaged is then skipped to the next chunk. Without them the next
    chunk is found by its shape (a chunk opcode, a length that fits, another record after it).
    """

    def __init__(self, file: IO[bytes], chunk_starts: Sequence[int] = ()) -> None:
        from mcap.records import Channel, Message, Metadata, Schema

        self._summary = _Summary()
        self._metadata: list[Any] = []
        self._messages: list[Any] = []
        self.complete = False  # the file ended where it should (a footer was read)
        self.damaged = 0  # records that did not parse (bad bytes), skipped
        self.stopped_at: int | None = None  # where a record ran past the end, if one did
        data = _whole(file)
        if data[: len(MAGIC)] != MAGIC:
            self.stopped_at = 0
            return
        starts = sorted(k for k in set(chunk_starts) if 0 < k < len(data) and data[k] == CHUNK)
        at = len(MAGIC)
        while at < len(data):
            end = _end_of_record(data, at)
            after = bisect.bisect_right(starts, at)  # the next chunk the summary knows of
            if end is None or (after < len(starts) and end > starts[after]):
                found = starts[after] if after < len(starts) else _next_chunk(data, at + 1)
                if found is None:
                    self.stopped_at = at  # cut short here: nothing whole after it
                    break
                self.damaged += 1  # a record whose opcode or length is wrong
                at = found
                continue
            if data[at] == FOOTER:
                self.complete = True
                break
            for record in self._records(bytes(data[at:end])):
                if isinstance(record, Message):
                    self._messages.append(record)
                elif isinstance(record, Schema):
                    self._summary.schemas[record.id] = record
                elif isinstance(record, Channel):
                    self._summary.channels[record.id] = record
                elif isinstance(record, Metadata):
                    self._metadata.append(record)
            at = end
        self._messages.sort(key=lambda m: m.log_time)

    def _records(self, raw: bytes) -> list[Any]:
        """The records in one record's bytes (a chunk holds many); none, counted, when it is
        damaged."""
        from mcap.exceptions import EndOfFile
        from mcap.stream_reader import StreamReader

        out: list[Any] = []
        try:
            for record in StreamReader(
                io.BytesIO(raw), skip_magic=True, validate_crcs=True
            ).records:
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
