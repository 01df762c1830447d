"""Sweeps: a scenario's runs over a grid of overrides and seeds, in parallel on this machine or
a Ray cluster, with one results row per run in Parquet. `fleetsim sweep` drives it."""

from fleetsim.sweep.driver import SweepResult, run_sweep
from fleetsim.sweep.plan import Plan, RunSpec, make_plan

__all__ = ["Plan", "RunSpec", "SweepResult", "make_plan", "run_sweep"]
