"""Results files of a run: `fleetsim run ... --output results.json` (or `.csv`, `.parquet`).

A run's results are its metadata (scenario, file, seed, fleetsim version, when), its summary and
KPIs as one row, and the per-robot and per-task tables of a fleet manager. JSON holds all of it
in one file. CSV and Parquet (pyarrow: `pip install "fleetsim[results]"`) write the run row to
the file named, and the tables beside it (`results.robots.csv`, `results.tasks.csv`); Parquet
files carry the metadata in their schema metadata too.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.scenario.runner import RunSummary

FORMATS = (".json", ".csv", ".parquet")


def fleetsim_version() -> str:
    """The fleetsim version that wrote the results."""
    try:
        return version("fleetsim")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def run_row(summary: RunSummary, meta: dict[str, Any]) -> dict[str, Any]:
    """One flat row: metadata, the run summary and every KPI (nested keys joined with '.')."""
    row: dict[str, Any] = dict(meta)
    row.update(
        sim_time_s=summary.sim_time,
        wall_time_s=summary.wall_time,
        real_time_factor=summary.real_time_factor,
        steps=summary.steps,
        robots=summary.robots,
        actions_completed=summary.actions_completed,
        actions_failed=summary.actions_failed,
        collisions=summary.collisions,
        stopped_by=summary.stopped_by,
    )
    row.update(_flat("collisions", summary.collisions_by_kind))
    row.update(_flat("", {k: v for k, v in summary.kpis.items() if k != "robots"}))
    return row


def write_results(path: str | Path, summary: RunSummary, meta: dict[str, Any]) -> list[Path]:
    """Write the results; returns the files written."""
    extra = {"kpis": summary.kpis}
    return write_rows(path, lambda m: run_row(summary, m), dict(summary.tables), meta, extra)


def write_rows(
    path: str | Path,
    row_of: Any,
    tables: dict[str, list[dict[str, Any]]],
    meta: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> list[Path]:
    """Write a run's row (`row_of(meta)`) and its tables as JSON, CSV or Parquet (by the file
    name); returns the files written. JSON holds all of it (and `extra`) in one file."""
    out = Path(path)
    if out.suffix.lower() not in FORMATS:
        raise ConfigError(f"--output {path}: use a .json, .csv or .parquet file name")
    meta = {"fleetsim_version": fleetsim_version(), "written_at": _now(), **meta}
    row = row_of(meta)
    out.parent.mkdir(parents=True, exist_ok=True)
    suffix = out.suffix.lower()
    if suffix == ".json":
        doc = {"metadata": meta, "summary": row, **(extra or {}), **tables}
        out.write_text(json.dumps(clean(doc), indent=1))
        return [out]
    written = [out]
    if suffix == ".csv":
        _write_csv(out, [row])
        for name, rows in tables.items():
            written.append(_write_csv(out.with_suffix(f".{name}.csv"), rows))
        return written
    _write_parquet(out, [row], meta)
    for name, rows in tables.items():
        written.append(_write_parquet(out.with_suffix(f".{name}.parquet"), rows, meta))
    return written


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(clean(rows))
    return path


def _write_parquet(path: Path, rows: list[dict[str, Any]], meta: dict[str, Any]) -> Path:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            'Parquet output needs pyarrow: pip install "fleetsim[results]" (or use .json/.csv)'
        ) from None
    columns = list(dict.fromkeys(k for row in rows for k in row))
    data = {c: [row.get(c) for row in clean(rows)] for c in columns}
    table = pa.table(data) if columns else pa.table({"empty": pa.array([], pa.null())})
    table = table.replace_schema_metadata({"fleetsim": json.dumps(clean(meta))})
    pq.write_table(table, path)
    return path


def _flat(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.update(_flat(name, value))
        else:
            out[name] = value
    return out


def clean(value: Any) -> Any:
    """JSON- and CSV-safe: NaN and infinities become None, NumPy scalars plain numbers."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
