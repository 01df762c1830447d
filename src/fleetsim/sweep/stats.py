"""Per-combination statistics of a sweep: mean and 95% confidence interval over seeds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Student's t, two-sided 95%, for 1..30 degrees of freedom; beyond, 1.96 + 2.36 / df (within
# 0.003 of the exact value).
T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
FLEET_KPIS = ("throughput_per_hour", "tasks_completed", "cycle_time_s.mean", "utilisation")
RUN_KPIS = ("actions_completed", "actions_failed")


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    return T95[df - 1] if df <= len(T95) else 1.96 + 2.36 / df


@dataclass(frozen=True)
class Estimate:
    """A mean and the half-width of its 95% interval (None with one value)."""

    n: int
    mean: float
    half_width: float  # the 95% interval is mean +- half_width (nan for one run)

    def text(self) -> str:
        """`mean ± half-width`."""
        if self.n == 0:
            return "-"
        digits = 1 if abs(self.mean) >= 100 else (2 if abs(self.mean) >= 1 else 3)
        if math.isnan(self.half_width):
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def estimate(values: Sequence[float]) -> Estimate:
    """The mean of `values` and its 95% interval."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return Estimate(0, math.nan, math.nan)
    mean = sum(xs) / n
    if n == 1:
        return Estimate(1, mean, math.nan)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return Estimate(n, mean, t95(n - 1) * sd / math.sqrt(n))


def headline(kpis: Sequence[str]) -> list[str]:
    """The KPIs a summary shows: the fleet manager's when there is one (else the actions'),
    stalls, collisions and the real-time factor."""
    chosen = [k for k in FLEET_KPIS if k in kpis] or [k for k in RUN_KPIS if k in kpis]
    return chosen + [k for k in ("stalls", "collisions", "real_time_factor") if k in kpis]


def by_combination(
    rows: Sequence[dict[str, Any]], swept: Sequence[str]
) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Rows grouped by their swept values, in the order the combinations first appear."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        key = tuple(_hashable(row.get(k)) for k in swept)
        groups.setdefault(key, []).append(row)
    return groups


def summarise(
    rows: Sequence[dict[str, Any]], swept: Sequence[str], kpis: Sequence[str]
) -> list[dict[str, Any]]:
    """One line per combination: its values, runs ok / failed, and each KPI's estimate over
    the runs that succeeded."""
    out = []
    for key, group in by_combination(rows, swept).items():
        ok = [r for r in group if r.get("status") == "ok"]
        line: dict[str, Any] = dict(zip(swept, key, strict=True))
        line["runs"], line["failed"] = len(ok), len(group) - len(ok)
        for k in kpis:
            line[k] = estimate([r[k] for r in ok if isinstance(r.get(k), int | float)])
        out.append(line)
    return out


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value
