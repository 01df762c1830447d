"""`fleetsim sweep`: plans, bad input before any run, local and Ray backends, results in
Parquet, resume, plots and DuckDB queries, run as a user runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fleetsim import ConfigError
from fleetsim.sweep import make_plan
from fleetsim.sweep.plan import parse_seeds, split_values
from fleetsim.sweep.stats import estimate

ROBOTS = "robots[0].start.random"
KPIS = ("tasks_completed", "throughput_per_hour", "distance_m", "collisions", "steps")
TINY = """\
name: tiny
simulation: {timestep: 0.1, target_rtf: 0, duration: 4, seed: 1}
robots:
  - name: r
    model: simple_cube
    pose: [0.0, 0.0, 0.0]
    actions: [{type: move_to, pose: [1.0, 0.0, 0.0]}]
"""


def sweep_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", "sweep", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def rows(path: Path) -> dict[tuple[object, object], dict[str, object]]:
    return {(r[ROBOTS], r["seed"]): r for r in pq.read_table(path).to_pylist()}


def test_plans_and_their_errors(tmp_path: Path) -> None:
    assert split_values('3,[1,2],"a,b", x') == ["3", "[1,2]", '"a,b"', "x"]
    assert parse_seeds("1-3,7,2") == [1, 2, 3, 7]
    plan = make_plan("warehouse", [f"{ROBOTS}=3,6", "simulation.duration=30"], "1-2")
    assert plan.swept == {ROBOTS: [3, 6]} and plan.fixed == ["simulation.duration=30"]
    runs = plan.runs()
    assert len(runs) == 4 and len({r.run_id for r in runs}) == 4
    assert runs[0].overrides == ("simulation.duration=30", f"{ROBOTS}=3") and runs[0].seed == 1
    again = make_plan("warehouse", [f"{ROBOTS}=3,6", "simulation.duration=30"], "1-2").runs()
    assert [r.run_id for r in again] == [r.run_id for r in runs]  # stable: what resume needs
    bad = {
        "robots[0].strat.random=3,6": "unknown key 'strat': did you mean 'start'",
        f"{ROBOTS}=3,many": "many",
        f"{ROBOTS}=": "no values",
        f"{ROBOTS}=3,3": "listed twice",
        "nothing": "KEY=V1,V2",
    }
    for item, message in bad.items():
        with pytest.raises(ConfigError, match=message):
            make_plan("warehouse", [item], None)
    with pytest.raises(ConfigError, match="runs backwards; write 1-5"):
        parse_seeds("5-1")
    est = estimate([10.0, 12.0, 14.0])
    assert est.mean == 12.0 and est.half_width == pytest.approx(4.303 * 2 / 3**0.5, rel=1e-3)


def test_bad_input_is_refused_before_any_run(tmp_path: Path) -> None:
    out = tmp_path / "s.parquet"
    cases = [
        (["--set", "robots[0].strat.random=3,6"], "did you mean 'start'"),
        (["--set", f"{ROBOTS}=3,lots"], ROBOTS),
        (["--set", f"{ROBOTS}="], "no values"),
        (["--set", f"{ROBOTS}=3,6", "--seeds", "5-1"], "write 1-5"),
        (
            ["--set", f"{ROBOTS}=3,6", "--backend", "ray", "--ray-address", "127.0.0.1:9"],
            "cannot reach a Ray cluster",
        ),
        (["--set", f"{ROBOTS}=3,6", "--backend", "spark"], "choose local or ray"),
        (["--set", f"{ROBOTS}=3,6", "--out", str(tmp_path / "s.csv")], "use a .parquet"),
    ]
    for args, message in cases:
        done = (
            sweep_cli("warehouse", *args, "--out", str(out), timeout=60)
            if "--out" not in args
            else sweep_cli("warehouse", *args, timeout=60)
        )
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert not out.exists() and not list(tmp_path.iterdir())


def test_a_local_sweep_end_to_end(tmp_path: Path) -> None:
    """Rows, failures, the KPIs a single `fleetsim run` gives, plots, details, resume, query."""
    out = tmp_path / "s.parquet"
    args = [
        "warehouse",
        "--set",
        f"{ROBOTS}=3,6,500",
        "--duration",
        "60",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    done = sweep_cli(*args, "--seeds", "1-2", "--plot", "--details")
    assert done.returncode == 1, done.stderr  # two runs failed
    assert "6 runs (2 failed), 0 already in the file" in done.stdout
    table = rows(out)
    assert len(table) == 6
    for seed in (1, 2):
        failed = table[(500, seed)]
        assert failed["status"] == "failed" and "do not fit" in str(failed["error"])
        assert table[(3, seed)]["status"] == "ok" and table[(3, seed)]["error"] is None
    assert "per combination" in done.stdout and "throughput_per_hour" in done.stdout
    # One run of the sweep equals the same run made alone.
    alone = tmp_path / "alone.json"
    single = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "run",
            "warehouse",
            "--set",
            f"{ROBOTS}=6",
            "--seed",
            "2",
            "--duration",
            "60",
            "--output",
            str(alone),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert single.returncode == 0, single.stderr
    summary = json.loads(alone.read_text())["summary"]
    swept = table[(6, 2)]
    assert {k: swept[k] for k in KPIS} == {k: summary[k] for k in KPIS}
    assert swept["distance_m"] > 1.0  # (the robots drove: the KPIs are not all zero)
    # Plots of the KPIs that vary, details per run.
    plots = sorted((tmp_path / "s.plots").glob("*.png"))
    assert any(p.name == "distance_m.png" for p in plots)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in plots)
    details = json.loads((tmp_path / "s.runs" / f"{swept['run_id']}.json").read_text())
    assert details["summary"]["distance_m"] == swept["distance_m"] and details["robots"]
    # Resume: only the new seed runs.
    again = sweep_cli(*args, "--seeds", "1-3", "--resume")
    assert "3 runs (1 failed), 6 already in the file" in again.stdout, again.stderr
    assert len(rows(out)) == 9 and not out.with_name("s.parquet.journal").exists()
    exists = sweep_cli(*args, "--seeds", "1-3")
    assert exists.returncode == 2 and "--resume" in exists.stderr
    # DuckDB on the results.
    sql = f"SELECT seed, \"{ROBOTS}\" AS robots, status FROM runs WHERE status = 'failed'"
    query = sweep_cli("query", str(out), sql)
    assert query.returncode == 0, query.stderr
    assert query.stdout.count("failed") == 3 and "500" in query.stdout
    wrong = sweep_cli("query", str(out), "SELECT nope FROM runs")
    assert wrong.returncode == 2 and "nope" in wrong.stderr


def children_of_none(python: str) -> list[str]:
    """Command lines of this interpreter's processes whose parent died (re-parented to 1):
    what a killed sweep would leave behind."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == 1 and cmd.startswith(python):
            found.append(cmd)
    return found


def test_a_killed_sweep_resumes_and_many_runs_stay_correct(tmp_path: Path) -> None:
    """60 small runs: killed after some are done, then resumed; every run once in the file
    (the journal keeps them until the file is written)."""
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(TINY)
    out = tmp_path / "many.parquet"
    args = [
        str(scenario),
        "--set",
        "robots[0].actions[0].pose=[0.5,0,0],[1,0,0],[30,0,0]",
        "--seeds",
        "1-20",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetsim", "sweep", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = out.with_name("many.parquet.journal")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.read_text().count("\n") >= 5:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    orphans: list[str] = []
    for _ in range(100):  # the workers and the resource tracker go with the sweep
        orphans = [
            cmd
            for cmd in children_of_none(sys.executable)
            if "spawn_main" in cmd or "resource_tracker" in cmd
        ]
        if not orphans:
            break
        time.sleep(0.1)
    assert orphans == [], orphans
    done = sweep_cli(*args, "--resume")
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out).to_pylist()
    assert len(table) == 60 and len({r["run_id"] for r in table}) == 60
    assert all(r["status"] == "ok" for r in table)
    ran, skipped = map(
        int, re.search(r"(\d+) runs \(0 failed\), (\d+) already", done.stdout).groups()
    )
    assert skipped >= 5 and ran >= 1 and ran + skipped == 60  # killed half-way, then finished
    far = [r for r in table if r["robots[0].actions[0].pose"] == [30, 0, 0]]
    near = [r for r in table if r["robots[0].actions[0].pose"] == [0.5, 0, 0]]
    assert len(far) == len(near) == 20
    assert all(r["actions_completed"] == 0 for r in far)  # 4 s: not there yet
    assert all(r["actions_completed"] == 1 for r in near)


def test_a_stopped_sweep_says_truthfully_where_its_rows_are(tmp_path: Path) -> None:
    from fleetsim.cli.sweep import where_the_rows_are
    from fleetsim.sweep.plan import parse_seeds

    seeds = parse_seeds("1-1000000")  # (a set: this used to take minutes, silently)
    assert len(seeds) == 1_000_000 and seeds[:2] == [1, 2] and seeds[-1] == 1_000_000
    assert parse_seeds("3,1-4,2") == [3, 1, 2, 4]
    out = tmp_path / "s.parquet"
    assert "no run had finished: nothing was written" in where_the_rows_are(out)
    out.with_name("s.parquet.journal").write_text("{}\n")
    said = where_the_rows_are(out)
    assert "s.parquet.journal" in said and "--resume carries on and writes" in said
    out.write_bytes(b"PAR1")
    assert "are in " + str(out) + " and " in where_the_rows_are(out)


def test_retry_failed_and_a_journal_without_resume(tmp_path: Path) -> None:
    """`--resume` keeps the failed rows; `--resume --retry-failed` runs just those again; and a
    sweep killed before its first Parquet write (only the journal left) is not mixed into a
    new sweep: without --resume it is refused, naming --resume."""
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(TINY)
    out = tmp_path / "r.parquet"
    args = [
        str(scenario),
        "--set",
        "robots[0].model=simple_cube,no_such_model",
        "--seeds",
        "1-2",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    first = sweep_cli(*args)
    assert first.returncode == 1 and "4 runs (2 failed), 0 already" in first.stdout
    again = sweep_cli(*args, "--resume")
    assert "0 runs (0 failed), 4 already in the file" in again.stdout, again.stdout
    retried = sweep_cli(*args, "--resume", "--retry-failed")
    assert "2 runs (2 failed), 2 already in the file" in retried.stdout, retried.stdout
    table = pq.read_table(out).to_pylist()
    assert len(table) == 4 and sorted(r["status"] for r in table) == ["failed"] * 2 + ["ok"] * 2
    fresh = tmp_path / "fresh.parquet"
    fresh.with_name("fresh.parquet.journal").write_text(json.dumps({"run_id": "x"}) + "\n")
    refused = sweep_cli(str(scenario), "--seeds", "1", "--out", str(fresh))
    assert refused.returncode == 2 and "--resume" in refused.stderr, refused.stderr
    assert not fresh.exists()


LATE_ARMING = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from fleetsim.sweep.worker import die_with_parent

def start_up():  # a worker's slow start-up imports, then the parent-death signal
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(1.5)
    die_with_parent()

if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, multiprocessing.get_context("spawn"), start_up)
    pool.submit(time.sleep, 0)  # the sweep's own pool: workers start with the first run
    time.sleep(60)
"""


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_worker_whose_sweep_died_during_its_start_up_exits(tmp_path: Path) -> None:
    """The sweep is killed before its worker arms the parent-death signal: the worker sees
    it is no longer the sweep's child and exits rather than live on as an orphan."""
    driver = tmp_path / "driver.py"
    driver.write_text(LATE_ARMING)
    proc = subprocess.Popen([sys.executable, str(driver), str(tmp_path)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not [p for p in tmp_path.iterdir() if p.name.isdigit()]:
        time.sleep(0.02)
    proc.kill()
    proc.wait(30)
    (worker,) = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
    for _ in range(100):
        if gone(worker):
            break
        time.sleep(0.1)
    alive = not gone(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the worker outlived its sweep"
