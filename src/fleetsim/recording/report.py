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

from fleetsim.errors import ConfigError, FleetSimError
from fleetsim.recording.reader import Frame, Recording
from fleetsim.recording.schemas import foxglove

NEEDS = 'the report needs matplotlib: pip install "fleetsim[viz]"'
WAITING = "waiting"


def write_report(source: Path, out: Path, notes: list[str] | None = None) -> list[str]:
    """Write the page for a recording (.mcap) or a results file (.json, `fleetsim run
    --output`) to `out`; returns the titles of the plots drawn. What the reader should know
    (a recording cut short) is added to `notes`."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FleetSimError(NEEDS) from None
    if source.suffix.lower() == ".json":
        data = from_results(source)
    elif source.suffix.lower() == ".mcap":
        with Recording(source) as recording:
            data = from_recording(recording)
            if recording.truncated is not None and notes is not None:
                notes.append(recording.truncated)
    else:
        raise ConfigError(f"{source}: a recording (.mcap) or a results file (.json)")
    sections: list[tuple[str, str]] = []  # (title, PNG base64)
    for title, draw in [
        ("Tasks and throughput", _kpis),
        ("Robot states", _states),
        ("Task cycle times", _cycles),
        ("Where robots waited", _waits),
        ("Collisions and near misses", _collisions),
    ]:
        fig = draw(plt, data)
        if fig is None:
            continue
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        sections.append((title, base64.b64encode(buffer.getvalue()).decode()))
    out.write_text(_page(data, sections))
    return [title for title, _png in sections]


# -- reading: what every plot needs, from a recording or from a results file --------------------


def from_recording(recording: Recording) -> dict[str, Any]:
    """The report's data (tasks, states, cycle times, waits, collisions, near misses) from a
    recording."""
    tables = [json.loads(d) for _t, _time, d in recording.messages("/fleet/state")]
    kpis = [json.loads(d) for _t, _time, d in recording.messages("/kpi")]
    events = recording.events()
    collisions = [e for e in events if e.get("kind") == "collisions"]
    wanted = {round(t["time"], 6) for t in tables} | {round(e["time"], 6) for e in collisions}
    frames: dict[float, Frame] = {}
    for shown in recording.frames():
        if round(shown.time, 6) in wanted:
            frames[round(shown.time, 6)] = shown
    states = None
    if tables:
        names = tables[-1]["states"]
        counts = np.array([np.bincount(t["state"], minlength=len(names)) for t in tables])
        states = (names, [t["time"] for t in tables], counts)
    cycles = [
        e["cycle_time_s"]
        for e in events
        if e.get("kind") == "task_done" and e.get("cycle_time_s") is not None
    ]
    waits: list[list[float]] = []
    for table in tables:
        at = frames.get(round(table["time"], 6))
        if WAITING in table["states"] and at is not None:
            code = table["states"].index(WAITING)
            rows = [k for k, state in enumerate(table["state"]) if state == code]
            waits.extend(at.xyz[rows, :2].tolist())
    hits: list[list[float]] = []
    for event in collisions:
        at = frames.get(round(event["time"], 6))
        if at is None:
            continue
        where = {name: k for k, name in enumerate(at.names)}
        for a, b in event["pairs"]:
            k = where.get(a, where.get(b))
            if k is not None:
                hits.append(at.xyz[k, :2].tolist())
    near = [[e["x"], e["y"]] for e in events if e.get("kind") == "near_miss" and "x" in e]
    meta = recording.metadata
    kinds = Counter(e.get("kind") for e in events)
    facts = [
        ("scenario", meta.get("scenario_file", "")),
        ("seed", meta.get("seed", "")),
        ("fleetsim", meta.get("fleetsim", "")),
        ("simulated time", f"{recording.end_time:.1f} s"),
        ("robots", str(len(tables[-1]["state"])) if tables else "-"),
        ("collisions began", str(len(hits) or sum(len(e["pairs"]) for e in collisions))),
        (
            "actions completed / failed",
            f"{kinds.get('action_completed', 0)} / {kinds.get('action_failed', 0)}",
        ),
    ]
    if kpis or kinds.get("task_done") or kinds.get("task_failed"):
        # from the task events, each written when its task ends (the KPI points are sparse)
        facts.append(
            (
                "tasks completed / failed",
                f"{kinds.get('task_done', 0)} / {kinds.get('task_failed', 0)}",
            )
        )
    if recording.truncated is not None:
        facts.append(("recording", recording.truncated))
    return {
        "title": meta.get("scenario", recording.path.stem),
        "facts": facts,
        "kpis": kpis,
        "states": states,
        "cycles": cycles,
        "waits": _xy(waits),
        "collisions": _xy(hits),
        "near": _xy(near),
        "lanes": _lanes(recording),
    }


def from_results(path: Path) -> dict[str, Any]:
    """A results file (`fleetsim run --output results.json`): KPI series (tasks, robot
    states), per-task cycle times, and collisions and near misses with their places."""
    try:
        results = json.loads(path.read_text())
        summary, series = results["summary"], results.get("series", [])
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError):
        raise ConfigError(
            f"{path}: not a fleetsim results file (fleetsim run --output results.json)"
        ) from None
    states = None
    names = [
        c.removeprefix("robots_") for c in (series[0] if series else {}) if c.startswith("robots_")
    ]
    if names:
        counts = np.array([[row[f"robots_{n}"] for n in names] for row in series])
        states = (names, [row["time"] for row in series], counts)
    cycles = [
        t["cycle_time_s"] for t in results.get("tasks", []) if t.get("cycle_time_s") is not None
    ]
    places = [[c["x"], c["y"]] for c in results.get("collisions", []) if "x" in c]
    near = [[n["x"], n["y"]] for n in results.get("near_misses", []) if "x" in n]
    facts = [
        ("scenario", summary.get("scenario_file", "")),
        ("seed", summary.get("seed", "")),
        ("fleetsim", summary.get("fleetsim_version", "")),
        ("simulated time", f"{summary.get('sim_time_s', 0.0):.1f} s"),
        ("robots", str(summary.get("robots", ""))),
        ("collisions", str(len(results.get("collisions", [])))),
    ]
    kpis = results.get("kpis", {})
    if "tasks_completed" in kpis:
        facts.append(("tasks completed", str(kpis["tasks_completed"])))
    return {
        "title": summary.get("scenario") or path.stem,
        "facts": facts,
        "kpis": series,
        "states": states,
        "cycles": cycles,
        "waits": _xy([]),
        "collisions": _xy(places),
        "near": _xy(near),
        "lanes": np.zeros((0, 2, 2)),
    }


def _xy(points: list[list[float]]) -> np.ndarray:
    return np.array(points, dtype=float).reshape(-1, 2)


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
    right.plot(
        t,
        [k.get("throughput_per_hour", 0) for k in kpis],
        color="tab:red",
        linestyle="--",
        label="throughput (/h)",
    )
    right.set_ylabel("tasks per hour")
    fig.legend(loc="upper left", fontsize=8)
    return fig


def _states(plt: Any, data: dict[str, Any]) -> Any:
    if data["states"] is None:
        return None
    names, t, counts = data["states"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.stackplot(t, np.asarray(counts).T, labels=names)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("robots")
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    return fig


def _cycles(plt: Any, data: dict[str, Any]) -> Any:
    done = data["cycles"]
    if not done:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.hist(done, bins=min(30, max(5, len(done) // 3)), color="tab:green")
    ax.axvline(float(np.median(done)), color="k", linestyle="--", label="median")
    ax.set_xlabel("cycle time: release to done (s)")
    ax.set_ylabel("tasks")
    ax.legend(fontsize=8)
    return fig


def _waits(plt: Any, data: dict[str, Any]) -> Any:
    xy = data["waits"]
    if not len(xy):
        return None
    fig, ax = _map(plt, data)
    heat = ax.hexbin(xy[:, 0], xy[:, 1], gridsize=30, cmap="inferno_r", mincnt=1, zorder=2)
    fig.colorbar(heat, ax=ax, label="robot-seconds waiting")
    return fig


def _collisions(plt: Any, data: dict[str, Any]) -> Any:
    hits, near = data["collisions"], data["near"]
    if not len(hits) and not len(near):
        return None
    fig, ax = _map(plt, data)
    ax.scatter(
        near[:, 0],
        near[:, 1],
        s=10,
        color="tab:orange",
        zorder=2,
        label=f"near misses ({len(near)})",
    )
    ax.scatter(
        hits[:, 0], hits[:, 1], s=14, color="tab:red", zorder=3, label=f"collisions ({len(hits)})"
    )
    ax.legend(fontsize=8)
    return fig


# -- the page -----------------------------------------------------------------------------------


def _page(data: dict[str, Any], sections: list[tuple[str, str]]) -> str:
    name = html.escape(str(data["title"]))
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
        for k, v in data["facts"]
    )
    figures = "".join(
        f'<h2>{html.escape(t)}</h2><img alt="{html.escape(t)}" src="data:image/png;base64,{png}">'
        for t, png in sections
    )
    missing = (
        ""
        if len(sections) == 5
        else (
            "<p>Plots without data here are left out (tasks and states need a fleet manager, "
            "waits need a recording, collisions need some).</p>"
        )
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{name}: fleetsim run"
        f"</title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}"
        f"th{{text-align:left;padding-right:2em}}img{{max-width:100%}}</style></head><body>"
        f"<h1>{name}</h1><table>{rows}</table>{missing}{figures}</body></html>"
    )
