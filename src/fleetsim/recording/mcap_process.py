"""The process that writes a recording's MCAP file: `python mcap_process.py PATH`.

Reads pickled jobs from stdin until None (see `McapOut`), prints "ready" once its imports are
done, and exits 0 with the file finished, or non-zero with the reason on stderr. It imports
nothing of fleetsim, so that it starts fast.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import sys
import threading
from typing import IO, Any

PROFILE = "fleetsim"
NS = 1_000_000_000


def fleet_points(pos: bytes, quat: bytes) -> bytes:
    """`/fleet`'s point data from float32 positions (N, 3) and quaternions (N, 4): x, y, z,
    yaw as float32 and the row index as uint32 (fleetsim.recording.writer.POINT)."""
    import numpy as np

    p = np.frombuffer(pos, dtype=np.float32).reshape(-1, 3)
    x, y, z, w = np.frombuffer(quat, dtype=np.float32).reshape(-1, 4).T
    points = np.empty((len(p), 5), dtype=np.float32)
    points[:, :3] = p
    points[:, 3] = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    points[:, 4].view(np.uint32)[:] = np.arange(len(p), dtype=np.uint32)
    return points.tobytes()


def state_table(table: dict[str, Any]) -> dict[str, Any]:
    """The `/fleet/state` JSON from the arrays the simulation sent."""
    import numpy as np

    battery = table["battery"]
    return {
        "time": table["time"],
        "states": table["states"],
        "state": np.frombuffer(table["state"], dtype=np.uint8).tolist(),
        "task": table["task"],
        "battery": None if battery is None else
        np.round(np.frombuffer(battery, dtype=np.float32), 2).tolist(),
        "speed": np.round(np.frombuffer(table["speed"], dtype=np.float32), 3).tolist(),
    }  # fmt: skip


def write(path: str, source: IO[bytes]) -> None:
    """Read jobs from `source` until None and write them to the MCAP file at `path`."""
    from mcap.writer import CompressionType, Writer

    jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def read() -> None:  # drains the pipe while the writer compresses
        try:
            while True:
                job = pickle.load(source)
                jobs.put(job)
                if job is None:
                    return
        except EOFError:
            jobs.put(EOFError)

    threading.Thread(target=read, daemon=True).start()
    print("ready", flush=True)
    with open(path, "wb") as file:
        writer = Writer(file, compression=CompressionType.ZSTD)
        writer.start(profile=PROFILE, library="fleetsim")
        channels: dict[str, int] = {}
        names: dict[int, str] = {}
        sequence = 0
        while (job := jobs.get()) is not None:
            if job is EOFError:
                raise SystemExit("the simulation went away before closing the recording")
            kind = job[0]
            if kind == "metadata":
                writer.add_metadata("fleetsim", job[1])
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
                data = json.dumps(state_table(table), separators=(",", ":")).encode()
            elif kind == "fleet":
                _, topic, time_ns, head, pos, quat = job
                data = head + fleet_points(pos, quat)
            else:  # collisions: the pairs by name (a body without one by its handle)
                _, topic, time_ns, a, b = job
                pairs = [[names.get(i, i), names.get(j, j)] for i, j in zip(a, b, strict=True)]
                event = {"kind": "collisions", "time": time_ns / NS, "pairs": pairs}
                data = json.dumps(event).encode()
            writer.add_message(channels[topic], log_time=time_ns, data=data,
                               publish_time=time_ns, sequence=sequence)  # fmt: skip
            sequence += 1
        writer.finish()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    try:
        os.nice(10)  # the simulation comes first when the two share a core
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) > 1:  # one core of its own, so that the scheduler moves the simulation off it
            os.sched_setaffinity(0, cpus[-1:])
    except (AttributeError, OSError):
        pass
    write(sys.argv[1], sys.stdin.buffer)
