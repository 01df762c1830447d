"""LoRR problems bundled with fleetsim, by name (`fleetsim lorr run NAME`; listed by
`fleetsim examples`). `tools/make_lorr_example.py` wrote them."""

from __future__ import annotations

from pathlib import Path

from fleetsim.errors import AssetNotFoundError, closest

FOLDER = Path(__file__).resolve().parent
EXAMPLES = {
    "warehouse_small": "60 robots fetch from shelf faces and deliver to stations down the left "
    "side of a 24 x 40 warehouse grid (two errands a task, light seeded delays)",
}


def bundled_problems() -> dict[str, Path]:
    """name -> the problem's input JSON."""
    return {name: FOLDER / name / f"{name}.json" for name in EXAMPLES}


def problem_path(name_or_path: str | Path) -> Path:
    """An input JSON: an existing path, or the name of a bundled problem."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    bundled = bundled_problems()
    if str(name_or_path) in bundled:
        return bundled[str(name_or_path)]
    guess = closest(str(name_or_path), bundled)
    hint = f"did you mean '{guess}'? " if guess else ""
    raise AssetNotFoundError(
        f"no LoRR input {name_or_path}: {hint}give an input JSON file or "
        f"a bundled problem ({', '.join(bundled)})"
    )
