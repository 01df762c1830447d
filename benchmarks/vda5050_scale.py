"""VDA 5050 at fleet scale: N simulated vehicles on a real broker, driven at real time by a
master control in another process, which measures how long each order takes to show up in the
vehicle's state (wall clock, from just before it publishes the order to the first state with
the new orderId).

    python benchmarks/vda5050_scale.py --vehicles 1000 --mode per-vehicle --seconds 60
    python benchmarks/vda5050_scale.py --vehicles 10000 --mode shared --seconds 60

Mosquitto is started on 127.0.0.1 (Debian's `mosquitto`) unless `--broker` names one. Vehicles
stand on a 4 m grid; each gets an order every `--order-period` s (staggered) to drive 2 m and
back on the next. Reported: real-time factor held, step time, order-to-state latency
(p50/p95/p99/max), orders unanswered, states received by the master, and CPU and memory per
vehicle of the simulation process (and the broker's CPU).

With network faults (`--drop 0.01 --delay 0.01`: each message, both ways, lost or late with
that probability, `fleetsim.faults.network`), the master does what a real one must: it sends
an order again when no state has shown it `RESEND_S` later (the same orderId and update: a
vehicle that has it already ignores the repeat). Reported: orders resent, and whether every
order still completed.

    python benchmarks/vda5050_scale.py --vehicles 1000 --seconds 60 --drop 0.01 --delay 0.01
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MANUFACTURER = "fleetsim"
RESEND_S = 3.0  # the master sends an order again when no state has shown it this long
PREFIX = f"uagv/v2/{MANUFACTURER}"
SCENARIO = """
simulation: {{timestep: {dt}, duration: {seconds}}}
robots:
  - {{name: amr, model: mobile_robot, grid: {{count: {n}, spacing: 4.0}}}}
"""


# -- the master control (a separate process) --------------------------------------------------


def order_json(
    serial: str, order_id: str, start: tuple[float, float], end: tuple[float, float], header: int
) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    node = (
        '{{"nodeId":"{0}","sequenceId":{1},"released":true,"actions":[],"nodePosition":'
        '{{"x":{2},"y":{3},"mapId":"site","allowedDeviationXY":0.5}}}}'
    )
    return (
        f'{{"headerId":{header},"timestamp":"{stamp}","version":"2.0.0","manufacturer":'
        f'"{MANUFACTURER}","serialNumber":"{serial}","orderId":"{order_id}",'
        f'"orderUpdateId":0,"nodes":[{node.format("a", 0, *start)},'
        f'{node.format("b", 2, *end)}],"edges":[{{"edgeId":"ab","sequenceId":1,'
        f'"released":true,"startNodeId":"a","endNodeId":"b","actions":[]}}]}}'
    )


def master(broker: str, vehicles: int, seconds: float, period: float) -> None:
    """Orders go out through paho; states come in through `mosquitto_sub` (C), so that the
    master keeps up with 10,000 states a second on a small machine."""
    import paho.mqtt.client as mqtt

    from fleetsim.interfaces.vda5050.broker import _sbin

    host, port = broker.split("://")[-1].rsplit(":", 1)
    where: dict[str, tuple[float, float]] = {}  # first known position of each vehicle
    pending: dict[str, tuple[bytes, float]] = {}  # serial -> (orderId bytes, sent at)
    last_sent: dict[str, tuple[str, float]] = {}  # serial -> (its order's JSON, sent at)
    latencies: list[float] = []
    received = [0]
    lock = threading.Lock()
    sub = subprocess.Popen(
        [
            _sbin("mosquitto_sub") or "mosquitto_sub",
            "-h",
            host,
            "-p",
            port,
            "-t",
            f"{PREFIX}/+/state",
            "-v",
        ],
        stdout=subprocess.PIPE,
    )

    def listen() -> None:
        assert sub.stdout is not None
        for line in sub.stdout:
            now = time.monotonic()
            topic, _, payload = line.partition(b" ")
            serial = topic.rsplit(b"/", 2)[-2].decode()
            received[0] += 1
            with lock:
                wait = pending.get(serial)
                if wait is not None and wait[0] in payload:
                    latencies.append(now - wait[1])
                    del pending[serial]
                elif serial not in where:
                    p = json.loads(payload)["agvPosition"]
                    where[serial] = (p["x"], p["y"])

    threading.Thread(target=listen, daemon=True).start()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench_master")
    client.on_socket_open = lambda _c, _u, sock: sock.setsockopt(
        socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
    )
    client.connect(host, int(port), 60)
    client.loop_start()
    time.sleep(0.5)  # mosquitto_sub subscribed
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while len(where) < vehicles and time.monotonic() < deadline:
        time.sleep(0.05)
    serials = sorted(where)
    sent, unanswered, resent, tick = 0, 0, 0, 0.05
    start = time.monotonic()
    end = start + seconds
    k = 0
    while time.monotonic() < end:
        due = int((time.monotonic() - start) / period * len(serials))  # orders sent by now
        while k < due:
            serial = serials[k % len(serials)]
            lap = k // len(serials)
            x, y = where[serial]
            a, b = ((x, y), (x + 2.0, y)) if lap % 2 == 0 else ((x + 2.0, y), (x, y))
            order_id = f"{serial}-{lap}"
            with lock:
                if serial in pending:
                    unanswered += 1  # the last one never showed up in a state
                pending[serial] = (f'"orderId":"{order_id}"'.encode(), time.monotonic())
            message = order_json(serial, order_id, a, b, k)
            client.publish(f"{PREFIX}/{serial}/order", message)
            last_sent[serial] = (message, time.monotonic())
            sent += 1
            k += 1
        now = time.monotonic()
        with lock:
            late = [s for s in pending if now - last_sent[s][1] > RESEND_S]
        for serial in late:  # no state has shown it: lost on the way (or its answer was)
            client.publish(f"{PREFIX}/{serial}/order", last_sent[serial][0])
            last_sent[serial] = (last_sent[serial][0], now)
            resent += 1
        time.sleep(tick)
    waited = time.monotonic() + 2.0 + (2 * RESEND_S if resent else 0.0)  # the last answers
    while time.monotonic() < waited:
        now = time.monotonic()
        with lock:
            late = [s for s in pending if now - last_sent[s][1] > RESEND_S]
        for serial in late:
            client.publish(f"{PREFIX}/{serial}/order", last_sent[serial][0])
            last_sent[serial] = (last_sent[serial][0], now)
            resent += 1
        time.sleep(tick)
    client.loop_stop()
    sub.terminate()
    with lock:
        unanswered += len(pending)
        lat = sorted(latencies)

    def pct(q: float) -> float:
        return 1e3 * lat[min(int(q * len(lat)), len(lat) - 1)] if lat else float("nan")

    print(
        json.dumps(
            {
                "sent": sent,
                "answered": len(lat),
                "unanswered": unanswered,
                "resent": resent,
                "states": received[0],
                "p50_ms": pct(0.50),
                "p95_ms": pct(0.95),
                "p99_ms": pct(0.99),
                "max_ms": 1e3 * lat[-1] if lat else float("nan"),
            }
        ),
        flush=True,
    )


# -- the simulation side ----------------------------------------------------------------------


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int | None = None) -> float:
    if pid is None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    n: int,
    mode: str,
    seconds: float,
    broker_url: str | None,
    period: float,
    dt: float,
    broker_pid: int | None,
    network: Any = None,
) -> dict[str, Any]:
    from fleetsim.interfaces.vda5050.fleet import VdaFleet
    from fleetsim.scenario import build, load_scenario
    from fleetsim.scenario.runner import run_scenario

    assert broker_url is not None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fleet.yaml"
        path.write_text(SCENARIO.format(dt=dt, seconds=seconds + 10, n=n))
        built = build(load_scenario(str(path)), target_rtf=1.0)
    with built.sim:
        before = rss_mb()
        t0 = time.perf_counter()
        fleet = VdaFleet(
            built.sim, built.scene.robots, broker_url, mode=mode, network=network
        ).start(timeout=120)
        connect_s = time.perf_counter() - t0
        fleet_mb = rss_mb() - before
        proc = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--master",
                broker_url,
                "--vehicles",
                str(n),
                "--seconds",
                str(seconds),
                "--order-period",
                str(period),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        cpu0, broker0, wall0 = cpu_s(), cpu_s(broker_pid) if broker_pid else 0.0, time.time()
        summary = run_scenario(built)
        wall = time.time() - wall0
        cpu = cpu_s() - cpu0
        broker_cpu = (cpu_s(broker_pid) - broker0) if broker_pid else float("nan")
        out = proc.communicate(timeout=120)[0]
        hits = fleet.network_counts
        fleet.stop()
    result = json.loads(out.strip().splitlines()[-1])
    sim_s = summary.sim_time
    return {
        "vehicles": n,
        "mode": mode,
        "connect_s": connect_s,
        "rtf": sim_s / wall,
        "ms_per_step": 1e3 * wall / max(round(sim_s / dt), 1),
        **result,
        "cpu_per_1000": 1000 * cpu / wall / n,
        "broker_cpu": broker_cpu / wall,
        "kb_per_vehicle": 1024 * fleet_mb / n,
        "rss_mb": rss_mb(),
        "dropped": hits["drop"],
        "delayed": hits["delay"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vehicles", type=int, nargs="+", default=[1000])
    parser.add_argument("--mode", choices=["per-vehicle", "shared"], default="per-vehicle")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--order-period", type=float, default=10.0)
    parser.add_argument("--timestep", type=float, default=0.1)
    parser.add_argument("--broker", default=None, help="mqtt://HOST:PORT (default: Mosquitto)")
    parser.add_argument("--drop", type=float, default=0.0, help="P(a message is lost)")
    parser.add_argument("--delay", type=float, default=0.0, help="P(a message is late)")
    parser.add_argument("--delay-s", type=float, nargs=2, default=[0.5, 2.0])
    parser.add_argument("--master", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.master:
        master(args.master, args.vehicles[0], args.seconds, args.order_period)
        return
    from fleetsim.faults.network import MessageFaults
    from fleetsim.interfaces.vda5050.broker import MosquittoBroker

    network = None
    if args.drop or args.delay:
        network = MessageFaults(
            drop=args.drop,
            delay=args.delay,
            delay_s=tuple(args.delay_s),
            topics=("order", "state"),
            seed=1,
        )
    rows = []
    for n in args.vehicles:
        broker = None if args.broker else MosquittoBroker().start()
        try:
            url = args.broker or broker.url  # type: ignore[union-attr]
            pid = broker._proc.pid if broker is not None and broker._proc else None
            rows.append(
                run(n, args.mode, args.seconds, url, args.order_period, args.timestep, pid, network)
            )
        finally:
            if broker is not None:
                broker.stop()
        r = rows[-1]
        print(
            f"{r['vehicles']:>6} {r['mode']:<11} rtf {r['rtf']:.3f}  step "
            f"{r['ms_per_step']:.1f} ms  orders {r['sent']} answered {r['answered']} "
            f"unanswered {r['unanswered']} resent {r['resent']} (messages dropped "
            f"{r['dropped']}, delayed {r['delayed']})  latency p50 {r['p50_ms']:.0f} p95 "
            f"{r['p95_ms']:.0f} p99 {r['p99_ms']:.0f} max {r['max_ms']:.0f} ms  states "
            f"{r['states']}  cpu {r['cpu_per_1000']:.2f} core/1000  broker "
            f"{r['broker_cpu']:.2f} core  {r['kb_per_vehicle']:.0f} kB/vehicle  "
            f"connect {r['connect_s']:.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
