"""`evaluate`: a policy over many seeds as a sweep, one episode per seed, in worker processes
on this machine (or Ray tasks on a cluster), one results row per episode (Parquet with
`out`), and each measure's mean with its 95% interval.

A policy is `policy(observations, rng) -> actions`, over the array API (`GridFleet`,
`FleetTask`): all agents' observations in, all actions out; `rng` is the episode's own seeded
generator (for a policy that samples). `make_env` makes the environment in the worker: a
module's function or a `functools.partial` of one (the two must pickle). An episode runs until
every agent is done or truncated. The same seed gives the same row, but for its wall time.
"""

from __future__ import annotations

import functools
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.sweep.backends import run_local, run_ray
from fleetsim.sweep.plan import RunSpec
from fleetsim.sweep.stats import Estimate, estimate

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]
MEASURES = ("reward_per_agent", "goals_per_agent", "goals", "collisions", "blocked_moves")


@dataclass
class Evaluation:
    """Every episode's row (`rows`, in seed order) and each measure's estimate."""

    rows: list[dict[str, Any]]

    def estimate(self, measure: str) -> Estimate:
        """A measure's mean over the episodes that ran, with its 95% interval."""
        return estimate([r[measure] for r in self.rows if r.get(measure) is not None])

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The rows of episodes that failed (their `error` says why)."""
        return [r for r in self.rows if r["status"] != "ok"]

    def table(self) -> str:
        """The measures as lines `measure: mean ± half-width (n episodes)`."""
        lines = []
        for measure in MEASURES:
            e = self.estimate(measure)
            if e.n:
                lines.append(f"{measure}: {e.text()} ({e.n} episodes)")
        return "\n".join(lines)


def episode(policy: Policy, make_env: Callable[[], Any], spec: RunSpec) -> dict[str, Any]:
    """One episode of `policy` in a fresh environment, seeded by `spec.seed`: its row."""
    seed = int(spec.seed or 0)
    row: dict[str, Any] = {"run_id": spec.run_id, "seed": seed, **spec.values}
    started = time.perf_counter()
    env = None
    try:
        env = make_env()
        rng = np.random.default_rng([seed, 1])
        obs = env.reset(seed=seed)
        total = goals = collisions = blocked = steps = 0.0
        while True:
            obs, rewards, terminated, truncated, state = env.step(policy(obs, rng))
            steps += 1
            total += float(np.sum(rewards))
            goals += float(np.count_nonzero(state.reached))
            if getattr(state, "collided", None) is not None:
                collisions += float(np.count_nonzero(state.collided))
            if getattr(state, "stopped", None) is not None:
                blocked += float(np.count_nonzero(state.stopped))
            if np.all(np.asarray(terminated) | np.asarray(truncated)):
                break
        agents = len(np.asarray(rewards))
        is_grid = getattr(state, "stopped", None) is not None
        row.update(status="ok", error=None, steps=int(steps), reward_per_agent=total / agents,
                   goals=int(goals), goals_per_agent=goals / agents,
                   collisions=None if is_grid else int(collisions),
                   blocked_moves=int(blocked) if is_grid else None)  # fmt: skip
    except Exception as exc:  # (a failed episode is a row; the others go on)
        lines = traceback.format_exception_only(type(exc), exc)
        row.update(status="failed", error="".join(lines).strip())
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()
    row["wall_time_s"] = time.perf_counter() - started
    return row


def evaluate(
    policy: Policy,
    make_env: Callable[[], Any],
    seeds: Iterable[int],
    workers: int = 2,
    backend: Literal["local", "ray"] = "local",
    out: str | Path | None = None,
    ray_address: str | None = None,
) -> Evaluation:
    """Run `policy` for one episode per seed in `workers` processes (`backend="ray"`: Ray
    tasks, on `ray_address` or a local Ray); the rows, also written to `out` (Parquet) when
    given. Errors before any episode for bad arguments."""
    seeds = _seeds(seeds)
    if not (isinstance(workers, int) and workers >= 1):
        raise ConfigError(f"evaluate: workers must be a whole number >= 1, got {workers!r}")
    if backend not in ("local", "ray"):
        raise ConfigError(f"evaluate: backend '{backend}': choose local or ray")
    name = getattr(policy, "__name__", type(policy).__name__)
    specs = [RunSpec(f"policy:{name}", (), seed, {}) for seed in seeds]
    work = functools.partial(episode, policy, make_env)
    rows = list(
        run_local(specs, workers, work)
        if backend == "local"
        else run_ray(specs, workers, ray_address, work)
    )
    rows.sort(key=lambda r: r["seed"])
    if out is not None:
        _write(Path(out), rows)
    return Evaluation(rows)


def _seeds(seeds: Iterable[int]) -> Sequence[int]:
    found = list(seeds)
    if not found:
        raise ConfigError("evaluate: no seeds given")
    bad = [s for s in found if not isinstance(s, int | np.integer) or isinstance(s, bool)]
    if bad:
        raise ConfigError(f"evaluate: seeds are whole numbers, got {bad[0]!r}")
    if len(set(found)) != len(found):
        raise ConfigError("evaluate: a seed is given twice (the same seed, the same episode)")
    return [int(s) for s in found]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            'writing episodes to Parquet needs pyarrow: pip install "fleetsim[results]"'
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
