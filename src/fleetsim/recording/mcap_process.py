"""The process that writes a recording's MCAP file: `python mcap_process.py PATH`.

Reads pickled jobs from stdin until None, one at a time (a frame is a few kB: the 1 MB pipe
holds many while a chunk is compressed; see `McapOut`; a `fleet` job names a shared-memory slot
with the poses, `PoseSlots`, acknowledged with a byte on stdout), prints "ready" once its
imports are done, and exits 0 with the file finished, or non-zero with the reason on stderr. It
imports nothing of fleetsim, so that it starts fast. The encoders here are shared with the live
view (`LiveOut`). A chunk is closed at least every `CHUNK_EVERY_NS` of simulated time (besides
when it reaches the writer's 1 MB), so a run killed mid-way leaves a file readable up to its
last few seconds (`Salvaged`).
"""

from __future__ import annotations

import functools
import json
import mmap
import os
import pickle
import sys
import traceback
from typing import IO, Any

import numpy as np

PROFILE = "fleetsim"
NS = 1_000_000_000
PAIR_KEY_SHIFT = 2**31  # a pair's key: min(handle) * this + max(handle), as in fleetsim.collision
ZSTD_LEVEL = 2  # the mcap package's default is 3: as small a file (within 1%), a third faster
CHUNK_EVERY_NS = 2 * NS  # a chunk is closed (and written) at least every 2 simulated seconds


def fleet_points(pos: Any, quat: Any, head: bytes = b"") -> bytearray:
    """`head` followed by `/fleet`'s point data from positions (N, 3) and quaternions (N, 4)
    (arrays, or buffers of float32): x, y, z, yaw as float32 and the row index as uint32
    (fleetsim.recording.writer.POINT), made in place in the returned buffer."""
    p = _floats(pos).reshape(-1, 3)
    q = _floats(quat).reshape(-1, 4)
    out = bytearray(len(head) + 20 * len(p))
    out[: len(head)] = head
    points = np.frombuffer(out, dtype=np.float32, offset=len(head)).reshape(-1, 5)
    points[:, :3] = p
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    sin = w * z
    sin += x * y
    cos = y * y
    cos += z * z
    cos *= -1.0
    cos += 0.5  # atan2(2(wz + xy), 1 - 2(y^2 + z^2)), both halved
    np.arctan2(sin, cos, out=points[:, 3])
    points[:, 4] = _ids(len(p))
    return out


def _floats(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return data.astype(np.float32, copy=False)
    return np.frombuffer(data, dtype=np.float32)


@functools.lru_cache(maxsize=4)
def _ids(n: int) -> np.ndarray:
    """0..n-1 as uint32, seen as float32 (to be copied bit for bit into a float32 column)."""
    return np.arange(n, dtype=np.uint32).view(np.float32)


def json_numbers(values: Any, decimals: int | None) -> str:
    """A JSON array of `values` rounded to `decimals` (None: integers; NaN: null). Each
    distinct value is formatted once (a fleet's speeds and states repeat), three times faster
    than `json.dumps` on 10,000 floats."""
    v = np.asarray(values)
    if decimals is not None:
        v = np.round(v.astype(np.float64), decimals)
    uniq, inverse = np.unique(v, return_inverse=True)
    words = np.array(["null" if x != x else repr(x) for x in uniq.tolist()], dtype=object)
    return "[" + ",".join(words[inverse.reshape(-1)].tolist()) + "]"


def state_json(table: dict[str, Any]) -> bytes:
    """The `/fleet/state` JSON from the arrays the simulation sent: `state` (uint8 bytes),
    `task` (list, or None: no robot has one), `battery` (float32 bytes or None), `speed`
    (float32 bytes)."""
    battery = table["battery"]
    parts = [
        f'"time":{json.dumps(table["time"])}',
        f'"states":{json.dumps(table["states"])}',
        f'"state":{json_numbers(np.frombuffer(table["state"], dtype=np.uint8), None)}',
        '"task":'
        + (
            "[" + ",".join(["null"] * len(table["state"])) + "]"
            if table["task"] is None
            else json.dumps(table["task"], separators=(",", ":"))
        ),
        '"battery":'
        + (
            "null" if battery is None else json_numbers(np.frombuffer(battery, dtype=np.float32), 2)
        ),
        f'"speed":{json_numbers(np.frombuffer(table["speed"], dtype=np.float32), 3)}',
    ]
    return ("{" + ",".join(parts) + "}").encode()


def action_events(items: list[tuple[str, float, str, str, str | None]]) -> list[bytes]:
    """`action_completed` / `action_failed` events from (kind, time, robot name, action class,
    reason or None)."""
    out = []
    for kind, time_s, robot, action, reason in items:
        why = "" if reason is None else f',"reason":{json.dumps(reason)}'
        out.append(
            f'{{"kind":"{kind}","time":{time_s!r},"robot":{json.dumps(robot)},'
            f'"action":{json.dumps(action)}{why}}}'.encode()
        )
    return out


class Names:
    """Body names by handle, kept JSON-quoted, for `collisions` events."""

    def __init__(self) -> None:
        self._quoted: dict[int, str] = {}

    def update(self, names: dict[int, str]) -> None:
        """Note robots' names (quoted once) for the events that name them."""
        self._quoted.update((h, json.dumps(name)) for h, name in names.items())

    def collisions(self, time_ns: int, keys: Any) -> bytes:
        """A `collisions` event for the pairs of bodies in `keys` (int64 pair keys, or their
        bytes: see `PAIR_KEY_SHIFT`), by name (a body without one by its handle)."""
        k = np.frombuffer(keys, dtype=np.int64)
        a, b = (k // PAIR_KEY_SHIFT).tolist(), (k % PAIR_KEY_SHIFT).tolist()
        q = self._quoted
        try:
            qa, qb = list(map(q.__getitem__, a)), list(map(q.__getitem__, b))
        except KeyError:  # some body has no name
            qa, qb = [q.get(i, str(i)) for i in a], [q.get(j, str(j)) for j in b]
        pairs = "],[".join(map(",".join, zip(qa, qb, strict=True)))
        pairs = f"[{pairs}]" if pairs else ""
        return f'{{"kind":"collisions","time":{time_ns / NS!r},"pairs":[{pairs}]}}'.encode()


class Slots:
    """The writer's side of `fleetsim.recording.slots.PoseSlots`."""

    def __init__(self) -> None:
        self._map: mmap.mmap | None = None
        self._bytes = 0

    def map(self, path: str, slot_bytes: int) -> None:
        """Map the shared pose slots in `path` (again, when they grew)."""
        if self._map is not None:
            self._map.close()
        with open(path, "rb") as file:
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        os.unlink(path)  # mapped: the file goes with the last mapping
        self._bytes = slot_bytes

    def take(self, slot: int, n: int) -> tuple[memoryview, memoryview]:
        """The positions and quaternions (float32 bytes) of `n` robots in `slot`."""
        base = slot * self._bytes
        view = memoryview(self._map)  # type: ignore[arg-type]
        return view[base : base + 12 * n], view[base + 12 * n : base + 28 * n]


class _Zstd:
    """`zstandard` as the mcap writer calls it (`compress(data)`), at `ZSTD_LEVEL`, with one
    compression context kept (the module function makes one per chunk)."""

    def __init__(self, module: Any) -> None:
        self.compress = module.ZstdCompressor(level=ZSTD_LEVEL).compress


def zstd_writer(file: IO[bytes]) -> Any:
    """An MCAP writer with zstd chunks, closed at least every few simulated seconds."""
    import mcap.writer
    from mcap.writer import CompressionType, Writer

    module = getattr(mcap.writer, "zstandard", None)
    if module is not None and hasattr(module, "ZstdCompressor"):
        setattr(mcap.writer, "zstandard", _Zstd(module))  # noqa: B010 - the writer reads it
    return Writer(file, compression=CompressionType.ZSTD)


def _next(source: IO[bytes]) -> Any:
    try:
        return pickle.load(source)
    except EOFError:
        raise SystemExit("the simulation went away before closing the recording") from None


def write(path: str, source: IO[bytes]) -> None:
    """Read jobs from `source` until None and write them to the MCAP file at `path`."""
    with open(path, "wb") as file:
        writer = zstd_writer(file)
        print("ready", flush=True)  # imports done: what follows is the recording's own work
        writer.start(profile=PROFILE, library="fleetsim")
        channels: dict[str, int] = {}
        names = Names()
        poses = Slots()
        acks = sys.stdout.buffer
        sequence = 0
        close_chunk_at = CHUNK_EVERY_NS
        while (job := _next(source)) is not None:
            kind = job[0]
            if kind == "metadata":
                writer.add_metadata("fleetsim", job[1])
                continue
            if kind == "slots":
                poses.map(*job[1:])
                continue
            if kind == "names":
                names.update(job[1])
                continue
            if kind == "channel":
                _, topic, schema_name, encoding, schema = job
                schema_id = writer.register_schema(schema_name, encoding, schema)
                message_encoding = "protobuf" if encoding == "protobuf" else "json"
                channels[topic] = writer.register_channel(topic, message_encoding, schema_id)
                continue
            if kind == "message":
                _, topic, time_ns, data = job
            elif kind == "state":
                _, topic, time_ns, table = job
                data = state_json(table)
            elif kind == "actions":
                _, topic, items = job
                for item, data in zip(items, action_events(items), strict=True):
                    time_ns = round(item[1] * NS)
                    writer.add_message(
                        channels[topic],
                        log_time=time_ns,
                        data=data,
                        publish_time=time_ns,
                        sequence=sequence,
                    )
                    sequence += 1
                continue
            elif kind == "fleet":
                _, topic, time_ns, head, n, slot = job
                data = fleet_points(*poses.take(slot, n), head)
                acks.write(b"\x01")  # the slot is free again
                acks.flush()
            else:
                _, topic, time_ns, keys = job
                data = names.collisions(time_ns, keys)
            writer.add_message(
                channels[topic],
                log_time=time_ns,
                data=data,
                publish_time=time_ns,
                sequence=sequence,
            )
            sequence += 1
            if time_ns >= close_chunk_at:  # a run killed now leaves all but the last seconds
                writer.flush()
                close_chunk_at = time_ns + CHUNK_EVERY_NS
        writer.finish()


if __name__ == "__main__":
    try:
        os.nice(10)  # the simulation comes first when the two share a core
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) > 1:  # one core of its own, so that the scheduler moves the simulation off it
            os.sched_setaffinity(0, cpus[-1:])
    except (AttributeError, OSError):
        pass
    try:
        write(sys.argv[1], sys.stdin.buffer)
    except BaseException as exc:  # the reason, last on stderr; no wait for the reading thread
        traceback.print_exc()
        print(
            exc if isinstance(exc, SystemExit) else f"{type(exc).__name__}: {exc}",
            file=sys.stderr,
            flush=True,
        )
        os._exit(1)
