"""`fleetsim sweep --plot`: a PNG per KPI against the swept parameter (matplotlib).

The first swept key is the x axis (numbers on a number line, anything else as categories); a
second (and further) swept key draws one line per value. Each point is the mean over seeds
with its 95% interval; the runs themselves are the faint dots.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fleetsim.errors import ConfigError
from fleetsim.sweep.stats import by_combination, estimate

NEEDS = 'sweep plots need matplotlib: pip install "fleetsim[viz]"'


def write_plots(
    rows: Sequence[dict[str, Any]], swept: Sequence[str], kpis: Sequence[str], folder: Path
) -> list[Path]:
    """A PNG per KPI that varies, against the first swept key (a line per value of a second)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(NEEDS) from None
    if not swept:
        raise ConfigError("--plot: nothing is swept; give a --set KEY=V1,V2,... to plot against")
    folder.mkdir(parents=True, exist_ok=True)
    ok = [r for r in rows if r.get("status") == "ok"]
    x_key, others = swept[0], list(swept[1:])
    xs = list(dict.fromkeys(_key(r.get(x_key)) for r in rows))
    numeric = all(isinstance(x, int | float) and not isinstance(x, bool) for x in xs)
    position = {x: (x if numeric else k) for k, x in enumerate(xs)}
    lines = by_combination(ok, others) if others else {(): ok}
    written = []
    for kpi in kpis:
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
        for line_key, group in lines.items():
            label = ", ".join(f"{k}={v}" for k, v in zip(others, line_key, strict=True))
            points = []
            for x in xs:
                values = [
                    r[kpi]
                    for r in group
                    if _key(r.get(x_key)) == x and isinstance(r.get(kpi), int | float)
                ]
                ax.scatter([position[x]] * len(values), values, s=8, alpha=0.25, color="grey")
                est = estimate(values)
                if est.n:
                    points.append((position[x], est.mean, 0.0 if est.n == 1 else est.half_width))
            if points:
                px, py, err = zip(*points, strict=True)
                ax.errorbar(px, py, yerr=err, marker="o", capsize=3, label=label or None)
        ax.set_xlabel(x_key)
        ax.set_ylabel(kpi)
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_title(f"{kpi} against {x_key} (mean, 95% interval over seeds)", fontsize=9)
        ax.grid(alpha=0.3)
        if others:
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = folder / f"{_file_name(kpi)}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _file_name(kpi: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", kpi).strip("_") or "kpi"
