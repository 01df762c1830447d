"""What recording costs: step time with and without `record(sim, ...)` on the same run, side by
side (one recording, paused and resumed, so blocks of steps alternate between the two and drift
on a shared machine hits both), and the file's size per frame.

    python benchmarks/recording.py --robots 1000 10000 --rate 10

The workload is the bundled `fleet_10k` scenario (cube robots driving to random goals, a
collision check every step, 0.1 s step) at the given fleet size; at `--rate 10` every step is a
recorded frame.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fleetsim.recording import record
from fleetsim.scenario import build, load_scenario


def writer_cpu_s(recorder: Any) -> float:
    """CPU seconds the recording's writer process has used so far (Linux)."""
    pid = recorder._out._proc.pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def blocks(n: int, rate: float, block: int, rounds: int) -> dict[str, Any]:
    """One recording of the whole run, paused and resumed: blocks of `block` steps alternate
    between recorded and not (a paused recorder is unhooked and its writer idles), so both
    see the same fleet and the same machine. Starting and closing the file are timed apart."""
    built = build(load_scenario("fleet_10k", [f"robots[0].grid.count={n}"]))
    sim = built.sim
    plain: list[float] = []
    recorded: list[float] = []
    ratios: list[float] = []  # each round's recorded / plain step time
    own = [0.0]  # time the recorder takes inside the step (its post_step handler)
    writer_s = 0.0
    with sim, tempfile.TemporaryDirectory() as folder:
        for _ in range(20):  # warm up: robots under way
            sim.step_once()
        path = Path(folder) / "run.mcap"
        t = time.perf_counter()
        recorder = record(sim, path, rate=rate)
        start_s = time.perf_counter() - t
        timed = recorder._after_step

        def after_step(timed: Any = timed) -> None:
            t = time.perf_counter()
            timed()
            own[0] += time.perf_counter() - t

        recorder._after_step = after_step  # type: ignore[method-assign]
        recorder.pause()  # (resume() hooks the timed handler: it looks it up anew)
        for _ in range(rounds):
            before = len(plain)
            for _ in range(block):
                t = time.perf_counter()
                sim.step_once()
                plain.append(time.perf_counter() - t)
            recorder.resume()
            cpu = writer_cpu_s(recorder)
            for _ in range(block):
                t = time.perf_counter()
                sim.step_once()
                recorded.append(time.perf_counter() - t)
            writer_s += writer_cpu_s(recorder) - cpu  # (what is still queued is left out)
            recorder.pause()
            ratios.append(statistics.mean(recorded[before:]) / statistics.mean(plain[before:]))
        frames = recorder.frames
        t = time.perf_counter()
        recorder.close()
        close_s = time.perf_counter() - t
        size = path.stat().st_size
    base, with_rec = statistics.mean(plain), statistics.mean(recorded)
    return {
        "robots": n,
        "rate": rate,
        "step_ms": 1e3 * base,
        "recorded_step_ms": 1e3 * with_rec,
        "overhead": with_rec / base - 1,
        "median_overhead": statistics.median(ratios) - 1,
        "own_ms": 1e3 * own[0] / len(recorded),
        "writer_ms": 1e3 * writer_s / frames,
        "kb_per_frame": size / frames / 1024,
        "mb_per_minute": size / frames * rate * 60 / 2**20,
        "start_ms": 1e3 * start_s,
        "close_ms": 1e3 * close_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--block", type=int, default=20, help="steps per block")
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    for n in args.robots:
        r = blocks(n, args.rate, args.block, args.rounds)
        print(
            f"{r['robots']:>6} robots at {r['rate']:g} Hz: step {r['step_ms']:.2f} ms, "
            f"recording {r['recorded_step_ms']:.2f} ms ({100 * r['overhead']:+.1f}%, "
            f"median of rounds {100 * r['median_overhead']:+.1f}%; the recorder's own "
            f"{r['own_ms']:.2f} ms a step, the writer process {r['writer_ms']:.2f} ms CPU a "
            f"frame), "
            f"{r['kb_per_frame']:.1f} kB a frame ({r['mb_per_minute']:.1f} MB a minute), "
            f"starting {r['start_ms']:.0f} ms, closing {r['close_ms']:.0f} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
