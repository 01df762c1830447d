"""`run_fuzz`: many seeded runs of a scenario with faults, on the sweep engine (a local pool or
Ray), each checked; every failing run kept as a scenario file that makes it again (confirmed
by running it, with a recording when the `record` extra is there) and shrunk.

Results: one row per run in a Parquet file (as a sweep's: a journal as runs finish, `resume`
skips the runs done), with the check that failed and when it first failed; the kept runs in a
folder beside it (`FUZZ.failures/RUN_ID/`: `failing.yaml`, `shrunk.yaml`, their recordings and
a `summary.json`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.fuzz.checks import Check
from fleetsim.fuzz.guided import closeness, mutants
from fleetsim.fuzz.inputs import FaultsSource, check_once, in_faults_file, read_faults
from fleetsim.fuzz.keep import kept_scenario, write_kept
from fleetsim.fuzz.outside import OutsideManager
from fleetsim.fuzz.run import FuzzWork, fuzz_one
from fleetsim.fuzz.shrink import Shrinker
from fleetsim.scenario import load_scenario
from fleetsim.sweep.driver import prepare, rows_of
from fleetsim.sweep.plan import RunSpec

MAX_RUNS = 1_000_000
SEARCHES = ("uniform", "guided")
GUIDE_PARENTS = 4  # guided search mutates the runs this many closest to failing


@dataclass
class FuzzResult:
    """What a fuzz did: every row, the runs done now, those skipped (resumed) and the failing
    runs kept (run id -> its folder)."""

    rows: list[dict[str, Any]]
    ran: int
    skipped: int
    failing: dict[str, Path]
    unkept: dict[str, str] = dataclasses.field(default_factory=dict)  # run id -> why not kept


def fuzz_specs(
    scenario: str,
    runs: int,
    first_seed: int,
    faults: dict[str, Any] | None,
    sets: list[str],
    duration: float | None,
    source: FaultsSource | None = None,
    check: bool = False,
) -> list[RunSpec]:
    """The runs: seeds `first_seed` .. + `runs` - 1, with `faults` (a `faults:` section) as an
    override; checked against the schema before any run (and, with `check`, built once: a
    fault naming what the run does not have is an error now). Errors in the faults name
    `source`'s file and line when they came from one."""
    try:
        return _specs(scenario, runs, first_seed, faults, sets, duration, check)
    except ConfigError as exc:
        raise in_faults_file(exc, source) from None


def _specs(
    scenario: str,
    runs: int,
    first_seed: int,
    faults: dict[str, Any] | None,
    sets: list[str],
    duration: float | None,
    check: bool,
) -> list[RunSpec]:
    if not 1 <= runs <= MAX_RUNS:
        raise ConfigError(f"--runs {runs}: expected 1 to {MAX_RUNS:,}")
    if not 0 <= first_seed <= 2**32 - runs:
        raise ConfigError(f"--first-seed {first_seed}: seeds must stay below 2^32")
    overrides = list(sets)
    if faults is not None:
        overrides.append("faults=" + json.dumps(faults))
    loaded = load_scenario(scenario, overrides)  # (every error now, before the first run)
    if loaded.scenario.faults is None:
        raise ConfigError(
            f"{scenario}: no faults to fuzz with: give --faults (a faults: "
            "section) or add one to the scenario"
        )
    if check:
        check_once(loaded, duration, first_seed)
    path = str(loaded.path)
    return [
        RunSpec(path, tuple(overrides), seed, {"run": k}, duration)
        for k, seed in enumerate(range(first_seed, first_seed + runs))
    ]


def run_fuzz(
    specs: list[RunSpec],
    checks: list[Check],
    out: Path,
    *,
    workers: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    resume: bool = False,
    wall_limit_s: float | None = None,
    shrink_runs: int = 60,
    manager: OutsideManager | None = None,
    search: str = "uniform",
    progress: Callable[[str, int, int], None] | None = None,
) -> FuzzResult:
    """Run `specs`, check them, keep and shrink the failing ones; `progress(stage, done,
    total)` as it goes ("runs", then "keep"). With an outside `manager`, each run's files (its
    log) go to `OUT.runs/RUN_ID/`. `search="guided"` runs half the runs on their seeds and the
    other half as mutants of the runs that came closest to failing (`fuzz.guided`)."""
    if search not in SEARCHES:
        raise ConfigError(f"--search {search}: choose {' or '.join(SEARCHES)}")
    store = prepare(out, workers, backend, ray_address, resume)
    if manager is not None:
        runs = out.with_name(out.stem + ".runs")
        specs = [dataclasses.replace(s, details=str(runs / s.run_id)) for s in specs]
    done = store.done()
    guided = len(specs) // 2 if search == "guided" else 0
    seeded = specs[: len(specs) - guided]
    todo = [s for s in seeded if s.run_id not in done]
    total = len(todo) + guided
    if progress is not None:
        progress("runs", 0, total)
    work = FuzzWork(tuple(checks), wall_limit_s, manager)
    failing: list[tuple[RunSpec, dict[str, Any]]] = []
    closest: list[tuple[RunSpec, dict[str, Any]]] = []  # the passing runs, for guided search
    by_id = {s.run_id: s for s in specs}
    finished = 0

    def take(batch: list[RunSpec]) -> None:
        nonlocal finished
        by_id.update((s.run_id, s) for s in batch)
        for row in rows_of(batch, backend, workers, ray_address, work):
            spec = by_id[row["run_id"]]
            if row.get("check"):
                failing.append((spec, row))
            elif guided and row.get("status") == "ok":
                closest.append((spec, row))
                closest.sort(key=lambda pair: closeness(pair[1]))
                del closest[GUIDE_PARENTS:]
            store.add({key: v for key, v in row.items() if key != "schedule"})
            finished += 1
            if progress is not None:
                progress("runs", finished, total)

    try:
        take(todo)
        rng = np.random.default_rng([specs[0].seed or 0, len(specs)])
        folder = out.with_name(out.stem + ".mutants")
        left = guided
        while left > 0 and closest:
            batch = min(left, max(2, 2 * workers))
            take(mutants(list(closest), batch, len(specs) - left, folder, rng))
            left -= batch
    finally:
        store.close()
    folder = out.with_name(out.stem + ".failures")
    kept: dict[str, Path] = {}
    unkept: dict[str, str] = {}
    keep = KeepWork(
        tuple(checks), shrink_runs, manager, str(folder), {row["run_id"]: row for _, row in failing}
    )
    if progress is not None and failing:
        progress("keep", 0, len(failing))
    # each failing run kept and shrunk in a worker of its own (the shrinking of one is a
    # sequence of runs; several are shrunk at once)
    for k, done in enumerate(
        rows_of([s for s, _ in failing], backend, workers, ray_address, keep), start=1
    ):
        if done.get("folder"):
            kept[done["run_id"]] = Path(done["folder"])
        else:
            unkept[done["run_id"]] = str(done.get("error"))
        if progress is not None:
            progress("keep", k, len(failing))
    return FuzzResult(store.rows(), finished, len(seeded) - len(todo), kept, unkept)


@dataclass(frozen=True)
class KeepWork:
    """`work` for the sweep backends: a failing run (its spec; its row from `rows`) kept and
    shrunk in `folder`/RUN_ID (picklable)."""

    checks: tuple[Check, ...]
    shrink_runs: int
    manager: OutsideManager | None
    folder: str
    rows: dict[str, dict[str, Any]]

    def __call__(self, spec: RunSpec) -> dict[str, Any]:
        """Keep the run `spec`; a row naming its folder (or the error, if keeping failed)."""
        try:
            path = keep_failure(
                spec,
                self.rows[spec.run_id],
                Path(self.folder) / spec.run_id,
                list(self.checks),
                self.shrink_runs,
                self.manager,
            )
        except Exception as exc:  # (a row, as for any run)
            return {
                "run_id": spec.run_id,
                "status": "failed",
                "folder": None,
                "error": f"{type(exc).__name__}: {exc}"[:2000],
            }
        return {"run_id": spec.run_id, "status": "ok", "folder": str(path)}


def keep_failure(
    spec: RunSpec,
    row: dict[str, Any],
    folder: Path,
    checks: list[Check],
    shrink_runs: int,
    manager: OutsideManager | None = None,
) -> Path:
    """Write the failing run as a scenario, confirm it fails the same way (recording it), shrink
    it, confirm and record the shrunk one; a summary beside them."""
    events = json.loads(row.get("schedule") or "[]")
    data = kept_scenario(spec.scenario, spec.overrides, spec.seed, spec.duration, events)
    failing = write_kept(
        data,
        folder / "failing.yaml",
        f"seed {spec.seed}: {row['check']} first at {row['first_failure_s']} s",
    )
    check = next(c for c in checks if str(c) == row["check"])
    again = _confirm(failing, check, folder / "failing.mcap", manager, folder / "failing")
    shrunk = Shrinker(
        data, check, budget=shrink_runs, folder=folder / "tries", manager=manager
    ).shrink()
    summary: dict[str, Any] = {
        "run_id": row["run_id"],
        "seed": spec.seed,
        "check": row["check"],
        "first_failure_s": row["first_failure_s"],
        "reproduced": again.get("check") == row["check"]
        and again.get("first_failure_s") == row["first_failure_s"],
        "faults": len(events),
        "robots": row.get("robots"),
        "duration_s": row.get("sim_time_s"),
        "shrink_runs": shrunk.runs,
        "steps": shrunk.steps,
        "manager": manager.command if manager is not None else None,
    }
    if shrunk.row:
        path = write_kept(
            shrunk.data,
            folder / "shrunk.yaml",
            f"shrunk from seed {spec.seed}: {shrunk.row['check']} first at "
            f"{shrunk.row['first_failure_s']} s",
        )
        confirmed = _confirm(path, check, folder / "shrunk.mcap", manager, folder / "shrunk")
        summary.update(
            shrunk_faults=len(shrunk.data.get("faults", {}).get("events", [])),
            shrunk_robots=confirmed.get("robots"),
            shrunk_duration_s=confirmed.get("sim_time_s"),
            shrunk_first_failure_s=confirmed.get("first_failure_s"),
            shrunk_confirmed=confirmed.get("check") == row["check"],
        )
    else:  # every kept failure has its shrunk case, or says why not
        summary["not_shrunk"] = _why_not_shrunk(shrink_runs, again, row, shrunk.steps)
    _clean(folder / "tries")
    (folder / "summary.json").write_text(json.dumps(summary, indent=1))
    return folder


def _why_not_shrunk(
    budget: int, again: dict[str, Any], row: dict[str, Any], steps: list[str]
) -> str:
    """Why a kept failure has no shrunk.yaml, in words."""
    if budget <= 0:
        return "shrinking is off (--shrink-runs 0)"
    if again.get("check") != row["check"]:
        got = again.get("check") or again.get("error") or "no check failed"
        return (
            f"failing.yaml did not fail {row['check']} again when run ({got}): the run is "
            "not reproducible (an outside manager's timing?), so there is nothing to shrink"
        )
    return "; ".join(steps) or f"no run within the budget of {budget} failed the same way"


def _confirm(
    path: Path, check: Check, recording: Path, manager: OutsideManager | None, files: Path
) -> dict[str, Any]:
    """Run a kept scenario again (recording it when the `record` extra is installed)."""
    try:
        import fleetsim.recording  # noqa: F401  (mcap and Foxglove's schemas: an extra)
    except ImportError:
        recording = None  # type: ignore[assignment]
    spec = RunSpec(str(path), (), None, {}, None, str(files) if manager is not None else None)
    return fuzz_one(spec, [check], record=recording, manager=manager)


def _clean(folder: Path) -> None:
    if folder.is_dir():
        shutil.rmtree(folder)


def faults_of(text: str) -> dict[str, Any]:
    """`--faults`: a YAML file holding a `faults:` section (or the section itself), or the
    section as inline YAML (read bounded, as scenario files are)."""
    return read_faults(text)[0]
