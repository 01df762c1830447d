"""Open-RMF's fleet-manager API at fleet scale: N simulated robots served by `RmfFleet` and
uvicorn at real time, polled the way RMF's demo fleet adapter polls them: `status/?robot_name=`
for every robot every 0.1 s, from another process, each poll on a new connection (as the demo
adapter's `requests.get` does) or on one kept-alive connection per robot (`--connections keep`).
Every `--navigate-period` s each robot is also sent a `navigate/` 2 m away and back.

    python benchmarks/rmf_scale.py --robots 500 --seconds 60
    python benchmarks/rmf_scale.py --robots 100 500 1000 --connections keep

Reported: real-time factor held, step time, status polls answered and their latency
(p50/p95/p99/max, wall clock from opening the request to the whole answer), polls sent late
because the client fell behind, answers that were not 200 or named the wrong robot, navigate
commands and the share that completed (`last_completed_request`), and the CPU of both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENARIO = """
simulation: {{timestep: {dt}, duration: {seconds}}}
robots:
  - {{name: tinyRobot, model: mobile_robot, grid: {{count: {n}, spacing: 4.0}}}}
"""
PREFIX = "/open-rmf/rmf_demos_fm"


# -- the fleet adapter's side (a separate process) ----------------------------------------------


class Http(asyncio.Protocol):
    """A minimal HTTP/1.1 client as an asyncio protocol (cheap enough that one process can
    poll thousands of times a second): a new connection per request, or one kept alive."""

    def __init__(self, host: str, port: int, keep: bool) -> None:
        self.host, self.port, self.keep = host, port, keep
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._answer: asyncio.Future[tuple[int, bytes]] | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        if self.transport is None or self.transport.is_closing():
            await loop.create_connection(lambda: self, self.host, self.port)
        assert self.transport is not None
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Connection: {'keep-alive' if self.keep else 'close'}\r\n"
        )
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self._answer = loop.create_future()
        self.transport.write(head.encode() + b"\r\n" + body)
        return await self._answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._buf.clear()

    def data_received(self, data: bytes) -> None:
        self._buf += data
        end = self._buf.find(b"\r\n\r\n")
        if end < 0 or self._answer is None or self._answer.done():
            return
        head = bytes(self._buf[:end]).lower()
        at = head.find(b"content-length:")
        length = int(head[at + 15 :].split(b"\r\n", 1)[0]) if at >= 0 else 0
        if len(self._buf) < end + 4 + length:
            return
        body = bytes(self._buf[end + 4 : end + 4 + length])
        del self._buf[: end + 4 + length]
        self._answer.set_result((int(head.split(b" ", 2)[1]), body))
        if not self.keep and self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(ConnectionError(f"connection lost: {exc}"))


async def adapter(
    url: str,
    names: list[str],
    homes: list[tuple[float, float]],
    seconds: float,
    hz: float,
    keep: bool,
    navigate_period: float,
    part: tuple[int, int] = (0, 1),
) -> dict[str, Any]:
    """Poll (and command) the robots of `part` (i, n): every n-th from the i-th."""
    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    latencies: list[float] = []
    late, bad, sent_cmds = [0], [0], [0]
    completed: dict[str, int] = {}
    start = time.perf_counter() + 0.5
    end = start + seconds

    async def robot(k: int, name: str) -> None:
        http = Http(host, int(port), keep)
        period = 1.0 / hz
        due = start + period * k / len(names)  # spread over the period
        next_cmd = start + navigate_period * k / len(names)
        lap = 0
        while due < end:
            now = time.perf_counter()
            if due > now:
                await asyncio.sleep(due - now)
            elif now - due > period:
                late[0] += 1
            t0 = time.perf_counter()
            code, body = await http.request("GET", f"{PREFIX}/status/?robot_name={name}")
            latencies.append(time.perf_counter() - t0)
            if code != 200 or f'"robot_name":"{name}"'.encode() not in body:
                bad[0] += 1
            elif b'"last_completed_request":null' not in body:
                completed[name] = int(body.split(b'"last_completed_request":')[1].split(b",")[0])
            due += period
            if time.perf_counter() >= next_cmd and navigate_period > 0:
                x, y = homes[k]
                goal = {
                    "map_name": "L1",
                    "speed_limit": 0.0,
                    "destination": {"x": x + (2.0 if lap % 2 == 0 else 0.0), "y": y, "yaw": 0.0},
                }
                target = f"{PREFIX}/navigate/?robot_name={name}&cmd_id={lap}"
                code, _ = await http.request("POST", target, json.dumps(goal).encode())
                bad[0] += code != 200
                sent_cmds[0] += 1
                lap += 1
                next_cmd += navigate_period

    mine = range(part[0], len(names), part[1])
    await asyncio.gather(*(robot(k, names[k]) for k in mine))
    return {
        "latencies_ms": [round(1e3 * t, 3) for t in latencies],
        "late": late[0],
        "bad": bad[0],
        "commands": sent_cmds[0],
        "robots_completing": sum(1 for k in mine if names[k] in completed),
        "cpu_s": cpu_s(),
    }


def merge(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The adapters' results as one: counts summed, latency percentiles over all polls."""
    lat = sorted(t for r in results for t in r["latencies_ms"])

    def pct(q: float) -> float:
        return lat[min(int(q * len(lat)), len(lat) - 1)] if lat else float("nan")

    total = {
        key: sum(r[key] for r in results)
        for key in ("late", "bad", "commands", "robots_completing", "cpu_s")
    }
    return {
        "polls": len(lat),
        **total,
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": lat[-1] if lat else float("nan"),
    }


def run_adapter(
    url: str,
    seconds: float,
    hz: float,
    keep: bool,
    navigate_period: float,
    part: tuple[int, int],
    out: str,
) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{url}/status/", timeout=30) as response:
        robots = json.loads(response.read())["all_robots"]
    names = [r["robot_name"] for r in robots]
    homes = [(r["position"]["x"], r["position"]["y"]) for r in robots]
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    print("ready", flush=True)
    result = asyncio.run(adapter(url, names, homes, seconds, hz, keep, navigate_period, part))
    # to a file: the event loop can leave stdout non-blocking, and a long line is then cut
    Path(out).write_text(json.dumps(result))


# -- the simulation side ------------------------------------------------------------------------


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(
    n: int,
    seconds: float,
    dt: float,
    hz: float,
    keep: bool,
    navigate_period: float,
    pin: bool = False,
    adapters: int = 1,
) -> dict[str, Any]:
    from fleetsim.interfaces.rmf.fleet import RmfFleet
    from fleetsim.interfaces.rmf.server import RmfServer, make_app
    from fleetsim.scenario import build, load_scenario
    from fleetsim.scenario.runner import run_scenario

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.yaml"
        path.write_text(SCENARIO.format(dt=dt, seconds=seconds + 4, n=n))
        built = build(load_scenario(str(path)), target_rtf=1.0)
    with built.sim, tempfile.TemporaryDirectory() as outdir:
        fleet = RmfFleet(built.sim, built.scene.robots).start()
        with RmfServer(make_app(fleet)) as server:
            results = [Path(outdir) / f"adapter{i}.json" for i in range(adapters)]
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        __file__,
                        "--adapter",
                        server.url,
                        "--seconds",
                        str(seconds),
                        "--hz",
                        str(hz),
                        "--navigate-period",
                        str(navigate_period),
                        "--part",
                        f"{i}/{adapters}",
                        "--out",
                        str(results[i]),
                    ]
                    + (["--connections", "keep"] if keep else []),
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for i in range(adapters)
            ]
            if pin:  # the simulator on the first core, the adapters on the second
                os.sched_setaffinity(0, {0})
                for proc in procs:
                    os.sched_setaffinity(proc.pid, {1})
            for proc in procs:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            cpu0, wall0 = cpu_s(), time.perf_counter()
            summary = run_scenario(built)
            wall = time.perf_counter() - wall0
            cpu = cpu_s() - cpu0
            for proc in procs:
                proc.communicate(timeout=120)
            outs = [json.loads(path.read_text()) for path in results]
        fleet.stop_serving()
    result = merge(outs)
    steps = max(round(summary.sim_time / dt), 1)
    return {
        "robots": n,
        "connections": "keep" if keep else "new",
        "rtf": summary.sim_time / wall,
        "ms_per_step": 1e3 * wall / steps,
        "sim_cpu": cpu / wall,
        "adapter_cpu": result.pop("cpu_s") / seconds,
        "polls_per_s": result["polls"] / seconds,
        **result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[500])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--timestep", type=float, default=0.1)
    parser.add_argument("--hz", type=float, default=10.0, help="status polls per robot per s")
    parser.add_argument("--connections", choices=["new", "keep"], default="new")
    parser.add_argument("--navigate-period", type=float, default=10.0)
    parser.add_argument("--pin", action="store_true", help="simulator on CPU 0, adapter on 1")
    parser.add_argument(
        "--adapters",
        type=int,
        default=2,
        help="processes polling (one Python process lags behind 5,000 new connections a second)",
    )
    parser.add_argument("--adapter", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--part", default="0/1", help=argparse.SUPPRESS)
    parser.add_argument("--out", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    keep = args.connections == "keep"
    if args.adapter:
        i, n = (int(v) for v in args.part.split("/"))
        run_adapter(
            args.adapter, args.seconds, args.hz, keep, args.navigate_period, (i, n), args.out
        )
        return
    for n in args.robots:
        r = run(
            n,
            args.seconds,
            args.timestep,
            args.hz,
            keep,
            args.navigate_period,
            args.pin,
            args.adapters,
        )
        pinned = " pinned" if args.pin else ""
        print(
            f"{r['robots']:>5} robots  {r['connections']} connections{pinned}  "
            f"rtf {r['rtf']:.3f}  "
            f"step {r['ms_per_step']:.1f} ms  status {r['polls_per_s']:.0f}/s  p50 "
            f"{r['p50_ms']:.1f} p95 {r['p95_ms']:.1f} p99 {r['p99_ms']:.1f} max "
            f"{r['max_ms']:.0f} ms  late {r['late']}  bad {r['bad']}  navigate "
            f"{r['commands']} ({r['robots_completing']} robots completed some)  cpu sim+server "
            f"{r['sim_cpu']:.2f} adapter {r['adapter_cpu']:.2f} core",
            flush=True,
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
