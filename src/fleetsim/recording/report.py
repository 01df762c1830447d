"""`write_report`: a recording summed up as one HTML page with PNG plots (matplotlib).

Plots, each drawn when the recording has what it needs: tasks and throughput over time (`/kpi`),
robot states over time, stacked (`/fleet/state`), task cycle times (`task_done` events), where
robots waited (robots in the `waiting` state, on the site map), and where collisions began
(`/events`, at the colliding robot's recorded position) and near misses came closest. The PNGs
are embedded, so the page is one file to share.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.errors import FleetSimError
from fleetsim.recording.reader import Recording
from fleetsim.recording.schemas import foxglove

NEEDS = 'the report needs matplotlib: pip install "fleetsim[viz]"'
WAITING = "waiting"


def write_report(recording: Recording, out: Path) -> list[str]:
    """Write the page to `out`; returns the titles of the plots drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FleetSimError(NEEDS) from None
    data = _gather(recording)
    sections: list[tuple[str, str]] = []  # (title, PNG base64)
    for title, draw in [("Tasks and throughput", _kpis), ("Robot states", _states),
                        ("Task durations", _durations), ("Where robots waited", _waits),
                        ("Collisions and near misses", _collisions)]:  # fmt: skip
        fig = draw(plt, data)
        if fig is None:
            continue
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        sections.append((title, base64.b64encode(buffer.getvalue()).decode()))
    out.write_text(_page(recording, data, sections))
    return [title for title, _png in sections]


# -- reading ------------------------------------------------------------------------------------


def _gather(recording: Recording) -> dict[str, Any]:
    tables = [json.loads(d) for _t, _time, d in recording.messages("/fleet/state")]
    kpis = [json.loads(d) for _t, _time, d in recording.messages("/kpi")]
    events = recording.events()
    collisions = [e for e in events if e.get("kind") == "collisions"]
    wanted = {round(t["time"], 6) for t in tables} | {round(e["time"], 6) for e in collisions}
    frames = {}
    for frame in recording.frames():
        if round(frame.time, 6) in wanted:
            frames[round(frame.time, 6)] = frame
    return {"tables": tables, "kpis": kpis, "collisions": collisions, "frames": frames,
            "lanes": _lanes(recording), "events": events}  # fmt: skip


def _lanes(recording: Recording) -> np.ndarray:
    """The site's lane segments (K, 2, 2) from the first scene update, for map backgrounds."""
    scene_class = foxglove("SceneUpdate")
    for _topic, _time, data in recording.messages("/scene"):
        for entity in scene_class.FromString(data).entities:
            if entity.id == "site" and entity.lines:
                pts = np.array([[p.x, p.y] for p in entity.lines[0].points])
                return pts.reshape(-1, 2, 2)
        break
    return np.zeros((0, 2, 2))


# -- plots --------------------------------------------------------------------------------------


def _map(plt: Any, data: dict[str, Any]) -> tuple[Any, Any]:
    fig, ax = plt.subplots(figsize=(7, 6))
    for (x0, y0), (x1, y1) in data["lanes"]:
        ax.plot([x0, x1], [y0, y1], color="0.8", linewidth=0.8, zorder=1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return fig, ax


def _kpis(plt: Any, data: dict[str, Any]) -> Any:
    kpis = data["kpis"]
    if not kpis:
        return None
    t = [k["time"] for k in kpis]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot(t, [k.get("tasks_completed", 0) for k in kpis], marker="o", label="tasks completed")
    ax.plot(t, [k.get("tasks_released", 0) for k in kpis], marker=".", label="tasks released")
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("tasks")
    right = ax.twinx()
    right.plot(t, [k.get("throughput_per_hour", 0) for k in kpis], color="tab:red",
               linestyle="--", label="throughput (/h)")  # fmt: skip
    right.set_ylabel("tasks per hour")
    fig.legend(loc="upper left", fontsize=8)
    return fig


def _states(plt: Any, data: dict[str, Any]) -> Any:
    tables = data["tables"]
    if not tables:
        return None
    states = tables[-1]["states"]
    t = [table["time"] for table in tables]
    counts = np.array([np.bincount(table["state"], minlength=len(states)) for table in tables])
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.stackplot(t, counts.T, labels=states)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("robots")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    return fig


def _durations(plt: Any, data: dict[str, Any]) -> Any:
    """Cycle times from the `task_done` events; without them, how long each task id stayed
    on a robot in `/fleet/state` (to the second)."""
    done = [e["cycle_time_s"] for e in data["events"]
            if e.get("kind") == "task_done" and e.get("cycle_time_s") is not None]  # fmt: skip
    label = "cycle time: release to done (s)"
    if not done:
        seen: dict[str, list[float]] = {}
        for table in data["tables"]:
            for task in table["task"]:
                if task is not None:
                    seen.setdefault(task, [table["time"], table["time"]])[1] = table["time"]
        last = data["tables"][-1]["time"] if data["tables"] else 0.0
        done = [b - a for a, b in seen.values() if b < last]  # still running at the end: out
        label = "seconds from assignment to done (to the second)"
    if not done:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.hist(done, bins=min(30, max(5, len(done) // 3)), color="tab:green")
    ax.axvline(float(np.median(done)), color="k", linestyle="--", label="median")
    ax.set_xlabel(label)
    ax.set_ylabel("tasks")
    ax.legend(fontsize=8)
    return fig


def _waits(plt: Any, data: dict[str, Any]) -> Any:
    points = []
    for table in data["tables"]:
        if WAITING not in table["states"]:
            continue
        code = table["states"].index(WAITING)
        frame = data["frames"].get(round(table["time"], 6))
        rows = [k for k, s in enumerate(table["state"]) if s == code]
        if frame is not None and rows:
            points.append(frame.xyz[rows, :2])
    if not points:
        return None
    xy = np.concatenate(points)
    fig, ax = _map(plt, data)
    heat = ax.hexbin(xy[:, 0], xy[:, 1], gridsize=30, cmap="inferno_r", mincnt=1, zorder=2)
    fig.colorbar(heat, ax=ax, label="robot-seconds waiting")
    return fig


def _collisions(plt: Any, data: dict[str, Any]) -> Any:
    xy = []
    for event in data["collisions"]:
        frame = data["frames"].get(round(event["time"], 6))
        if frame is None:
            continue
        where = {name: k for k, name in enumerate(frame.names)}
        for a, b in event["pairs"]:
            k = where.get(a, where.get(b))
            if k is not None:
                xy.append(frame.xyz[k, :2])
    near = np.array([[e["x"], e["y"]] for e in data["events"]
                     if e.get("kind") == "near_miss" and "x" in e]).reshape(-1, 2)  # fmt: skip
    if not xy and not len(near):
        return None
    points = np.array(xy).reshape(-1, 2)
    fig, ax = _map(plt, data)
    ax.scatter(near[:, 0], near[:, 1], s=10, color="tab:orange", zorder=2,
               label=f"near misses ({len(near)})")  # fmt: skip
    ax.scatter(points[:, 0], points[:, 1], s=14, color="tab:red", zorder=3,
               label=f"collisions ({len(points)})")  # fmt: skip
    ax.legend(fontsize=8)
    return fig


# -- the page -----------------------------------------------------------------------------------


def _page(recording: Recording, data: dict[str, Any], sections: list[tuple[str, str]]) -> str:
    meta = recording.metadata
    name = html.escape(meta.get("scenario", recording.path.stem))
    tables, events = data["tables"], data["events"]
    kinds = Counter(e.get("kind") for e in events)
    facts = [("scenario", meta.get("scenario_file", name)), ("seed", meta.get("seed", "")),
             ("fleetsim", meta.get("fleetsim", "")),
             ("simulated time", f"{recording.end_time:.1f} s"),
             ("robots", str(len(tables[-1]["state"])) if tables else "-"),
             ("collisions began", str(sum(len(e["pairs"]) for e in data["collisions"]))),
             ("actions completed / failed",
              f"{kinds.get('action_completed', 0)} / {kinds.get('action_failed', 0)}")]  # fmt: skip
    if data["kpis"]:
        last = data["kpis"][-1]
        facts.append(("tasks completed", str(last.get("tasks_completed", ""))))
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in facts)  # fmt: skip
    figures = "".join(f'<h2>{html.escape(t)}</h2><img alt="{html.escape(t)}" '
                      f'src="data:image/png;base64,{png}">' for t, png in sections)  # fmt: skip
    missing = "" if len(sections) == 5 else (
        "<p>Plots without data in this recording are left out (tasks and states need a fleet "
        "manager; collisions need some).</p>")  # fmt: skip
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{name}: fleetsim run"
            f"</title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}"
            f"th{{text-align:left;padding-right:2em}}img{{max-width:100%}}</style></head><body>"
            f"<h1>{name}</h1><table>{rows}</table>{missing}{figures}</body></html>")  # fmt: skip
