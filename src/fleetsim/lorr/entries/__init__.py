"""fleetsim's default LoRR entries, written as kit entries (`import MAPF`): `pyMAPFPlanner.py`,
`pyTaskScheduler.py` and `pyExecutor.py`. `fleetsim lorr run` hosts whichever of the three a
run is not given; copied into the kit's `python/user_*` folders they run there too, with
fleetsim installed for the kit's Python (the planner's distance search is fleetsim's). Load
them with `fleetsim.lorr.mapf.load_entry` (they import `MAPF`, which exists only while
hosting)."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
FILES = {
    "planner": FOLDER / "pyMAPFPlanner.py",
    "scheduler": FOLDER / "pyTaskScheduler.py",
    "executor": FOLDER / "pyExecutor.py",
}

KIT_FOLDERS = {
    "planner": "user_planner",
    "scheduler": "user_scheduler",
    "executor": "user_executor",
}
KIT_FILES = {
    "planner": "pyMAPFPlanner.py",
    "scheduler": "pyTaskScheduler.py",
    "executor": "pyExecutor.py",
}


def find_entries(given: dict[str, Path | None], cwd: Path | None = None) -> dict[str, Path]:
    """The file of each entry: the one given, else the kit's `python/user_*/py*.py` under
    `cwd` (where the kit looks), else fleetsim's default."""
    here = cwd or Path.cwd()
    found = {}
    for kind, default in FILES.items():
        chosen = given.get(kind)
        kit = here / "python" / KIT_FOLDERS[kind] / KIT_FILES[kind]
        found[kind] = chosen if chosen is not None else kit if kit.is_file() else default
    return found


def is_default(path: Path) -> bool:
    """Whether `path` is one of fleetsim's default entries."""
    return path.resolve() in {p.resolve() for p in FILES.values()}
