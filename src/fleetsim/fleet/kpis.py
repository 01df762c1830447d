"""A fleet's numbers: KPIs at the end of (or during) a run, the KPI time series, and the
per-robot, per-task, collision, near-miss and stall rows. Each part of the fleet manager gives
its own numbers (`kpis()`); here they are put together in one order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleetsim.fleet.manager import FleetManager


def fleet_kpis(fleet: FleetManager) -> dict[str, Any]:
    """Tasks, throughput, cycle times, waiting, distance, utilisation, batteries, deadlocks
    (episodes, unresolved ones), stalls, collisions and near misses by kind, safety fields
    (protective stops, seconds stopped and slowed), doors and lifts, so far."""
    now = fleet.sim.sim_time
    traffic = fleet.traffic
    return {
        "sim_time_s": now,
        "robots": len(fleet.robots),
        **fleet.book.kpis(now),
        **fleet.accounts.kpis(),
        "battery": fleet.charging.kpis(fleet.failed),
        **traffic.kpis(),
        **fleet.stalls.kpis(),
        "collisions": dict(fleet.sim.collision_counts),
        "safety_fields": fleet.sim.safety.totals(now),  # protective stops, seconds stopped
        **fleet.near_misses.kpis(),
        **traffic.passage.kpis(),  # door waits; the doors' open time and cycles
        **traffic.lift_rides.kpis(),  # rides; the lifts' trips, use and waits
    }


def fleet_tables(fleet: FleetManager) -> dict[str, list[dict[str, Any]]]:
    """One row per robot (distance, time in each state, tasks done, battery), one per task
    (places, status, robot, life cycle times, cycle time, lateness, failure reason), one per
    collision (time, kind, the two bodies, where), one per near miss, one per stall (robot,
    task, where, what it waited for, from when to when) and the KPI series."""
    soc = fleet.charging.batteries.soc if fleet.charging.batteries is not None else None
    done_by = fleet.book.done_by_robot()
    robots = [
        {
            "robot": robot.name,
            **fleet.accounts.row(i),
            "tasks_done": done_by.get(robot.name, 0),
            "battery": float(soc[i]) if soc is not None else None,
        }
        for i, robot in enumerate(fleet.robots)
    ]
    return {
        "robots": robots,
        "tasks": fleet.book.rows(),
        "collisions": list(fleet.collision_log.records),
        "near_misses": list(fleet.near_misses.records),
        "stalls": [s.row() for s in fleet.stalls.records],
        "series": list(fleet.kpi_series.rows),
    }


class KpiSeries:
    """KPI snapshots (`rows`) every `every_s` simulated seconds: counts so far and the robots
    in each state then."""

    def __init__(self, every_s: float = 60.0) -> None:
        self.every_s = float(every_s)
        self.rows: list[dict[str, Any]] = []
        self._next = self.every_s

    def sample(self, now: float, fleet: FleetManager) -> None:
        """Take a snapshot of `fleet` if one is due at `now`."""
        if now >= self._next - 1e-9:
            self._next += self.every_s
            self.rows.append(series_row(fleet))


def series_row(fleet: FleetManager) -> dict[str, Any]:
    """A snapshot for the KPI time series: counts so far and robots in each state now."""
    now = fleet.sim.sim_time
    traffic = fleet.traffic
    counts = fleet.book.counts(now)
    row: dict[str, Any] = {
        "time": now,
        "tasks_released": counts["tasks_released"],
        "tasks_completed": counts["tasks_completed"],
        "tasks_failed": counts["tasks_failed"],
        "queued": len(fleet.book.queue),
        "throughput_per_hour": counts["throughput_per_hour"],
        "conflicts": traffic.refusals,  # a robot refused a node: it waits
        "deadlocks": len(traffic.deadlocks),
        "stalled": len(fleet.stalls.stalled),
        "collisions": len(fleet.collision_log.records),
    }
    row.update(fleet.accounts.counts())
    if fleet.charging.batteries is not None:
        b = fleet.charging.batteries
        row["battery_mean"] = float(b.soc.mean()) if len(fleet.robots) else None
    return row
