"""`fleetsim sweep`: a scenario over a grid of overrides and seeds, in parallel; and
`fleetsim sweep query FILE SQL` on the results (DuckDB)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from fleetsim.cli.scenario import EXIT_FAILURE, exit_for, handle_stop_signals
from fleetsim.errors import ConfigError, FleetSimError

MAX_SHOWN_ROWS = 200  # query results printed; the rest are counted


def sweep(
    scenario: str = typer.Argument(
        ..., help="A scenario file or bundled name (or `query`, see below)."
    ),
    query_args: list[str] | None = typer.Argument(
        None,
        help="For `fleetsim sweep query FILE SQL`: the results file and the SQL.",
        show_default=False,
    ),
    sets: list[str] = typer.Option(
        [],
        "--set",
        help="KEY=V1,V2,...: values to sweep (one value: fixed for every run). Repeatable.",
    ),
    seeds: str | None = typer.Option(
        None, "--seeds", help="Seeds: 1-20, 1,5,9 or 7 (default: the scenario's)."
    ),
    workers: int | None = typer.Option(
        None, "--workers", help="Runs at once (default: the number of CPUs)."
    ),
    backend: str = typer.Option("local", "--backend", help="local (a process pool) or ray."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="A Ray cluster: auto, ray://HOST:10001 (default: a local Ray)."
    ),
    out: Path = typer.Option(Path("sweep.parquet"), "--out", help="The results (Parquet)."),
    resume: bool = typer.Option(False, "--resume", help="Skip runs already in --out."),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="With --resume, run the failed runs again."
    ),
    duration: float | None = typer.Option(None, "--duration", help="Simulated seconds a run."),
    details: bool = typer.Option(
        False,
        "--details",
        help="Also each run's full results (robot and task tables) in OUT.runs/RUN_ID.json.",
    ),
    plot: bool = typer.Option(
        False, "--plot", help="PNG plots of each KPI against the swept parameter, in OUT.plots/."
    ),
) -> None:
    """Run SCENARIO for every combination of --set values and every seed, in parallel.

    One row per run in --out (overrides, seed, status, error, wall time, rtf, every KPI);
    a failed run is a row with its error. Then a table per combination: the mean and 95%
    interval of the headline KPIs over seeds. `fleetsim sweep query sweep.parquet "SELECT
    ..."` queries the results with DuckDB (the table is `runs`).
    """
    if scenario == "query":
        _query(query_args or [])
        return
    if query_args:
        raise exit_for(
            ConfigError(
                f"unexpected arguments {' '.join(query_args)}: give one "
                "scenario; values to sweep go in --set KEY=V1,V2"
            )
        )
    from fleetsim.sweep import make_plan, run_sweep
    from fleetsim.sweep.driver import prepare
    from fleetsim.sweep.stats import headline, summarise
    from fleetsim.sweep.store import kpi_columns

    console = Console(stderr=True)
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    handle_stop_signals()  # (Ctrl-C stops it even when started with SIGINT ignored)
    try:
        plan = make_plan(scenario, sets, seeds, duration)
        prepare(out, n_workers, backend, ray_address, resume or retry_failed)  # errors first
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=console) as bar:
            task = bar.add_task(plan.scenario.stem, total=None, status="")

            def progress(done: int, total: int, row: dict[str, Any] | None) -> None:
                if row is None:
                    bar.update(task, total=total, status=f"{n_workers} workers, {backend}")
                    return
                failed = " (failed)" if row.get("status") != "ok" else ""
                bar.update(task, completed=done, status=f"last: seed {row.get('seed')}{failed}")

            result = run_sweep(
                plan,
                out,
                workers=n_workers,
                backend=backend,
                ray_address=ray_address,
                resume=resume,
                retry_failed=retry_failed,
                details=details,
                progress=progress,
            )
        swept = list(plan.swept)
        order = {run.run_id: k for k, run in enumerate(plan.runs())}  # the plan's order
        result.rows.sort(key=lambda r: order.get(r["run_id"], len(order)))
        kpis = kpi_columns(result.rows, swept)
        _print_summary(summarise(result.rows, swept, headline(kpis)), swept)
        plots = None
        if plot:
            from fleetsim.sweep.plot import write_plots

            ok = [r for r in result.rows if r.get("status") == "ok"]
            varying = [k for k in kpis if len({r.get(k) for r in ok}) > 1]
            folder = out.with_name(out.stem + ".plots")
            plots = (write_plots(result.rows, swept, varying, folder), len(kpis) - len(varying))
    except FleetSimError as exc:
        raise exit_for(exc) from None
    except KeyboardInterrupt:
        typer.echo(f"stopped: {where_the_rows_are(out)}", err=True)
        raise typer.Exit(130) from None
    typer.echo(
        f"{result.ran} runs ({result.failed} failed), {result.skipped} already in the "
        f"file; results: {out}"
    )
    if plots is not None:
        typer.echo(
            f"plots: {len(plots[0])} in {out.with_name(out.stem + '.plots')} "
            f"({plots[1]} KPIs the same in every run left out)"
        )
    if result.failed:
        raise typer.Exit(EXIT_FAILURE)


def _print_summary(lines: list[dict[str, Any]], swept: list[str]) -> None:
    if not lines:
        return
    table = Table(title="per combination: mean ± 95% interval over seeds")
    kpis = [k for k in lines[0] if k not in (*swept, "runs", "failed")]
    names = (*swept, "runs", "failed", *kpis)
    for name in names:
        table.add_column(name, justify="right", min_width=min(len(name), 40))
    for line in lines:
        table.add_row(
            *(
                str(list(v) if isinstance(v := line[k], tuple) else v)
                for k in (*swept, "runs", "failed")
            ),
            *(line[k].text() for k in kpis),
        )
    Console(width=max(120, sum(max(min(len(n), 40), 16) + 3 for n in names))).print(table)


def _query(args: list[str]) -> None:
    if len(args) != 2:
        raise exit_for(
            ConfigError(
                'usage: fleetsim sweep query sweep.parquet "SELECT ..." '
                "(the runs are the table `runs`)"
            )
        )
    path, sql = Path(args[0]), args[1]
    try:
        import duckdb
    except ImportError:
        raise exit_for(ConfigError('queries need DuckDB: pip install "fleetsim[sweep]"')) from None
    if not path.is_file():
        raise exit_for(ConfigError(f"{path}: no such results file"))
    con = duckdb.connect()
    try:
        con.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet('{_sql_text(path)}')")
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description or []]
        rows = cursor.fetchmany(MAX_SHOWN_ROWS + 1)
    except duckdb.Error as exc:
        raise exit_for(ConfigError(f"query: {str(exc).splitlines()[0]}")) from None
    table = Table()
    for name in names:
        table.add_column(name, justify="right")
    for row in rows[:MAX_SHOWN_ROWS]:
        table.add_row(*(_cell(v) for v in row))
    Console(width=max(120, 14 * len(names))).print(table)
    if len(rows) > MAX_SHOWN_ROWS:
        typer.echo(
            f"(first {MAX_SHOWN_ROWS} rows shown; add LIMIT/OFFSET or write them out "
            "with COPY ... TO 'file.csv')"
        )


def _sql_text(path: Path) -> str:
    return str(path).replace("'", "''")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return "" if value is None else str(value)


def where_the_rows_are(out: Path) -> str:
    """What a stopped sweep left, truthfully: the results file, its journal, or nothing."""
    journal = out.with_name(out.name + ".journal")
    if out.exists() and journal.exists():
        return f"the finished runs are in {out} and {journal} (--resume carries on)"
    if out.exists():
        return f"the finished runs are in {out} (--resume carries on)"
    if journal.exists():
        return (
            f"the finished runs are in {journal} (one JSON row a line; --resume carries "
            f"on and writes {out})"
        )
    return f"no run had finished: nothing was written ({out} does not exist)"
