"""Benchmark: handle-to-row lookups of the state tables at fleet scale, and their memory.

`Table.rows(handles)` (the drivers' and plugins' way from robots to rows, every step) and
`Table.row(handle)` (a `SimObject`'s property reads) over N live bodies, side by side with the
floor they are measured against: one NumPy gather from a dense handle-indexed array, which is
what the map was before it gave memory back (8 bytes for every handle ever issued). Each size
runs fresh and with `--churn` spawn/remove cycles (parcels that come and go; the pages of
removed handles given back and reused) before or after the robots are spawned. Prints
microseconds, the ratio to the floor (and the worst variant) and the map's memory. Example:
    python benchmarks/handles.py --sizes 10000 100000 --churn 1000000 --json results/handles.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import write_json

from fleetsim.state import BodyTable


def best_us(fn: Any, repeat: int) -> float:
    """Median microseconds of `fn()` over `repeat` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def run_case(n: int, churn: int, robots_last: bool) -> dict[str, Any]:
    table = BodyTable(capacity=n)
    robots = table.add(n) if not robots_last else None
    batch = 5000
    for _ in range(churn // batch):  # parcels spawned and removed one at a time
        for handle in table.add(batch).tolist():
            table.remove(handle)
    if robots is None:  # (their handles in pages given back by the parcels, reused)
        robots = table.add(n)
    rng = np.random.default_rng(0)
    handles = rng.permutation(robots)
    dense = np.full(int(table.handles.max()) + 1, -1, dtype=np.int64)  # the floor
    dense[table.handles] = np.arange(table.size)
    assert np.array_equal(table.rows(handles), dense[handles])
    some = handles[:1000].tolist()
    return {
        "n": n,
        "churn": churn,
        "robots": "after" if robots_last else "before",
        "rows_us": best_us(lambda: table.rows(handles), 50),
        "dense_gather_us": best_us(lambda: dense[handles], 50),
        "row_1000_us": best_us(lambda: [table.row(h) for h in some], 50),
        "dense_row_1000_us": best_us(lambda: [int(dense[h]) for h in some], 50),
        "map_bytes": table._map.nbytes,
        "dense_bytes": 8 * int(table._map.issued),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--churn", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cases = [(0, False), (args.churn, False), (args.churn, True)]
    results = [run_case(n, churn, last) for n in args.sizes for churn, last in cases]
    print(
        f"{'N':>8} {'churn':>9} {'robots':>7} {'rows() µs':>10} {'gather µs':>10} {'ratio':>6} "
        f"{'1000 row() µs':>14} {'ratio':>6} {'map kB':>8} {'dense kB':>9}"
    )
    for r in results:
        r["rows_ratio"] = r["rows_us"] / r["dense_gather_us"]
        r["row_ratio"] = r["row_1000_us"] / r["dense_row_1000_us"]
        print(
            f"{r['n']:>8} {r['churn']:>9} {r['robots']:>7} {r['rows_us']:>10.1f} "
            f"{r['dense_gather_us']:>10.1f} {r['rows_ratio']:>6.2f} "
            f"{r['row_1000_us']:>14.1f} {r['row_ratio']:>6.2f} "
            f"{r['map_bytes'] / 1e3:>8.0f} {r['dense_bytes'] / 1e3:>9.0f}"
        )
    worst = max(results, key=lambda r: max(r["rows_ratio"], r["row_ratio"]))
    print(
        f"worst: N={worst['n']} churn={worst['churn']} robots {worst['robots']}: "
        f"rows() {worst['rows_ratio']:.2f}x, row() {worst['row_ratio']:.2f}x "
        "a dense gather"
    )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
