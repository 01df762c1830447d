"""A fleet's numbers: KPIs at the end of (or during) a run, and per-robot and per-task rows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.fleet.states import STATES, RobotState
from fleetsim.fleet.tasks import TaskStatus

if TYPE_CHECKING:
    from fleetsim.fleet.manager import FleetManager


def fleet_kpis(fleet: FleetManager) -> dict[str, Any]:
    """Tasks, throughput, cycle times, waiting, distance, utilisation, batteries, deadlocks
    (episodes, unresolved ones), stalls and collisions by kind, so far."""
    now = fleet.sim.sim_time
    done = [t for t in fleet.tasks if t.status is TaskStatus.DONE]
    cycles = np.array([t.cycle_time for t in done], dtype=np.float64)
    queued = np.array([t.times["assigned"] - t.times["released"] for t in done])
    total = fleet.time_in_state.sum(axis=1)
    busy = total - fleet.time_in_state[:, RobotState.IDLE]

    def spread(x: np.ndarray) -> dict[str, float | None]:
        if not x.size:
            return dict.fromkeys(("mean", "p50", "p95", "max"))
        p50, p95 = np.percentile(x, [50, 95]).tolist()
        return {"mean": float(x.mean()), "p50": p50, "p95": p95, "max": float(x.max())}

    return {
        "sim_time_s": now,
        "robots": len(fleet.robots),
        "tasks_released": len(fleet.tasks),
        "tasks_completed": len(done),
        "tasks_failed": sum(t.status is TaskStatus.FAILED for t in fleet.tasks),
        "throughput_per_hour": len(done) / now * 3600 if now > 0 else 0.0,
        "cycle_time_s": spread(cycles),  # released -> done
        "queue_time_s": spread(queued),  # released -> assigned: waiting for a robot
        "service_time_s": spread(cycles - queued),  # assigned -> done: the robot's part
        "waiting_time_s": float(fleet.time_in_state[:, RobotState.WAITING].sum()),
        "distance_m": float(fleet.distance.sum()),
        "distance_per_robot_m": float(fleet.distance.mean()) if len(fleet.robots) else 0.0,
        "utilisation": float(busy.sum() / total.sum()) if total.sum() > 0 else 0.0,
        "time_in_state_s": dict(zip(STATES, fleet.time_in_state.sum(axis=0).tolist(), strict=True)),
        "battery": _battery(fleet),
        "conflicts": getattr(fleet.traffic, "refusals", 0),  # a robot refused a node: it waits
        "deadlocks": len(fleet.traffic.deadlocks),  # episodes (one that came back: one)
        "deadlocks_unresolved": sum(not d.resolved for d in fleet.traffic.deadlocks),
        "deadlock_detections": sum(d.detections for d in fleet.traffic.deadlocks),
        "stalls": len(fleet.stalls.records),  # robots whose task stopped advancing
        "stalled_now": len(fleet.stalls.stalled),
        "stall_after_s": fleet.stalls.after_s,
        "collisions": dict(fleet.sim.collision_counts),
        "near_misses": _by_kind(fleet.near_misses.records),
        "near_miss_gap_m": fleet.near_misses.gap,
        **fleet.traffic.passage.kpis(),  # door waits; the doors' open time and cycles
        **fleet.traffic.lift_rides.kpis(),  # rides; the lifts' trips, use and waits
    }


def _battery(fleet: FleetManager) -> dict[str, Any] | None:
    b = fleet.batteries
    if b is None:
        return None
    return {
        "soc_min": float(b.soc.min()) if b.soc.size else None,
        "soc_mean": float(b.soc.mean()) if b.soc.size else None,
        "charging_sessions": fleet.charges,
        "ran_empty": int(fleet.failed.sum()),
    }


def fleet_tables(fleet: FleetManager) -> dict[str, list[dict[str, Any]]]:
    """One row per robot (distance, time in each state, tasks done, battery), one per task
    (places, status, robot, life cycle times, cycle time, lateness, failure reason), one per
    collision (time, kind, the two bodies, where) and one per stall (robot, task, where, what
    it waited for, from when to when)."""
    soc = fleet.batteries.soc if fleet.batteries is not None else None
    done_by: dict[str | None, int] = {}
    for t in fleet.tasks:
        if t.status is TaskStatus.DONE:
            done_by[t.robot] = done_by.get(t.robot, 0) + 1
    robots = []
    for i, robot in enumerate(fleet.robots):
        times = dict(zip(STATES, fleet.time_in_state[i].tolist(), strict=True))
        robots.append(
            {
                "robot": robot.name,
                "state": STATES[int(fleet.state[i])],
                "distance_m": float(fleet.distance[i]),
                **{f"{name}_s": t for name, t in times.items()},
                "tasks_done": done_by.get(robot.name, 0),
                "battery": float(soc[i]) if soc is not None else None,
            }
        )
    stamps = [s.value for s in TaskStatus if s is not TaskStatus.WAITING]
    tasks = [
        {
            "task": t.id,
            "kind": t.kind,
            "places": " > ".join(t.places),
            "priority": t.priority,
            "status": t.status.value,
            "robot": t.robot,
            "release_time": t.release_time,
            **{f"{name}_at": t.times.get(name) for name in stamps},
            "cycle_time_s": t.cycle_time,
            "deadline": t.deadline,
            "late": t.deadline is not None and t.times.get("done", math.inf) > t.deadline,
            "reason": t.reason,
        }
        for t in fleet.tasks
    ]
    return {
        "robots": robots,
        "tasks": tasks,
        "collisions": list(fleet.collisions),
        "near_misses": list(fleet.near_misses.records),
        "stalls": [s.row() for s in fleet.stalls.records],
        "series": list(fleet.series),
    }


def series_row(fleet: FleetManager) -> dict[str, Any]:
    """A snapshot for the KPI time series: counts so far and robots in each state now."""
    done = [t for t in fleet.tasks if t.status is TaskStatus.DONE]
    now = fleet.sim.sim_time
    row: dict[str, Any] = {
        "time": now,
        "tasks_released": len(fleet.tasks),
        "tasks_completed": len(done),
        "tasks_failed": sum(t.status is TaskStatus.FAILED for t in fleet.tasks),
        "queued": len(fleet.queue),
        "throughput_per_hour": len(done) / now * 3600 if now > 0 else 0.0,
        "conflicts": getattr(fleet.traffic, "refusals", 0),  # a robot refused a node: it waits
        "deadlocks": len(fleet.traffic.deadlocks),
        "stalled": len(fleet.stalls.stalled),
        "collisions": len(fleet.collisions),
    }
    counts = np.bincount(fleet.state, minlength=len(STATES))
    row.update({f"robots_{name}": int(n) for name, n in zip(STATES, counts, strict=True)})
    if fleet.batteries is not None:
        row["battery_mean"] = float(fleet.batteries.soc.mean()) if len(fleet.robots) else None
    return row


def _by_kind(records: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"robot-robot": 0, "robot-structure": 0}
    for r in records:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    return counts
