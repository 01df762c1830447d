"""A sweep's results file: one Parquet row per run, written as runs finish.

Rows go first to a journal beside the file (`sweep.parquet.journal`, JSON lines, flushed per
run), and the Parquet file is rewritten with them at the end and every
`CONSOLIDATE_EVERY_S` of a long sweep (to a temporary file, then renamed: it is always whole);
the journal then goes. The driver holds no rows while the sweep runs, and a sweep killed
half-way leaves every finished run on disk: `--resume` reads the file and the journal and skips
those runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from fleetsim.errors import ConfigError
from fleetsim.scenario.results import clean

CONSOLIDATE_EVERY_S = 600.0  # wall seconds: a long sweep's file can be queried as it goes
NEEDS = 'sweep results are Parquet files and need pyarrow: pip install "fleetsim[sweep]"'


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(NEEDS) from None
    return pa


class ResultStore:
    """A sweep's results: rows appended to a journal as runs finish, the Parquet file written from
    it at the end and every 10 minutes."""

    def __init__(self, path: Path, resume: bool = False) -> None:
        _pyarrow()
        if path.suffix.lower() != ".parquet":
            raise ConfigError(f"--out {path}: use a .parquet file name")
        self.path = path
        self.journal = path.with_name(path.name + ".journal")
        if not resume and (path.exists() or self.journal.exists()):
            raise ConfigError(
                f"--out {path}: the file exists; add --resume to carry on with "
                "it, or choose another --out"
            )
        if not path.parent.is_dir():
            raise ConfigError(f"--out {path}: no folder {path.parent}")
        self._file: IO[str] | None = None  # the journal, opened at the first row
        self._since = time.monotonic()

    def done(self) -> dict[str, str]:
        """The runs already in the file or the journal: run id -> status."""
        return {row["run_id"]: row.get("status", "ok") for row in self.rows()}

    def rows(self) -> list[dict[str, Any]]:
        """Every row: the Parquet file's, then the journal's (a later row for the same run id
        replaces an earlier one)."""
        by_id: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for row in read_rows(self.path):
                by_id[row["run_id"]] = row
        if self.journal.exists():
            if self._file is not None:
                self._file.flush()
            with self.journal.open() as f:
                for line in f:
                    if line.strip():
                        row = json.loads(line)
                        by_id[row["run_id"]] = row
        return list(by_id.values())

    def add(self, row: dict[str, Any]) -> None:
        """Append a run's row to the journal."""
        if self._file is None:
            try:
                self._file = self.journal.open("a")
            except OSError as exc:
                raise ConfigError(f"--out {self.path}: {exc.strerror or exc}") from None
        self._file.write(json.dumps(clean(row)) + "\n")
        self._file.flush()
        if time.monotonic() - self._since >= CONSOLIDATE_EVERY_S:
            self.consolidate()

    def consolidate(self) -> None:
        """Rewrite the Parquet file with every row so far; empty the journal."""
        pa = _pyarrow()
        import pyarrow.parquet as pq

        rows = self.rows()
        if not rows:
            return
        table = pa.Table.from_pylist(_uniform(rows))
        partial = self.path.with_name(self.path.name + ".partial")
        pq.write_table(table, partial)
        os.replace(partial, self.path)  # the file is always whole
        if self._file is not None:
            self._file.close()
        self._file = None
        self.journal.unlink(missing_ok=True)
        self._since = time.monotonic()

    def close(self) -> None:
        """Write the Parquet file and close the journal."""
        self.consolidate()
        if self._file is not None:
            self._file.close()
            self._file = None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file (Parquet, with its journal)."""
    _pyarrow()
    import pyarrow.parquet as pq

    try:
        return list(pq.read_table(path).to_pylist())
    except Exception as exc:  # pyarrow's errors have no common base
        raise ConfigError(f"{path}: not a sweep results file ({exc})") from None


def _uniform(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with one type per column: a column mixing numbers and text becomes text; int and
    float mix as float; every row has every column."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    kinds: dict[str, set[type]] = {c: set() for c in columns}
    for row in rows:
        for c in columns:
            v = row.get(c)
            if v is not None:
                kinds[c].add(bool if isinstance(v, bool) else type(v))
    out = []
    for row in rows:
        fixed = {}
        for c in columns:
            v = row.get(c)
            k = kinds[c]
            if v is not None and len(k) > 1:
                v = float(v) if k <= {int, float} else (v if isinstance(v, list) else str(v))
            fixed[c] = v
        out.append(fixed)
    return out


def kpi_columns(rows: Iterable[dict[str, Any]], swept: Iterable[str] = ()) -> list[str]:
    """Numeric result columns (the run's numbers and KPIs), in first-seen order."""
    skip = {"run_id", "seed", "status", "error", "overrides", "stopped_by", *swept}
    seen: dict[str, None] = {}
    for row in rows:
        for k, v in row.items():
            if k not in skip and isinstance(v, int | float) and not isinstance(v, bool):
                seen[k] = None
    return list(seen)
