"""A scenario's OpenUSD parts: `environment.usd` built as static boxes, and a `site.file` that
is a stage made into a site (its marked graph, or its floor plan's grid), reading the stage
once when both name the same file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleetsim.scenario import schema as s
from fleetsim.scenario.usd_spec import UsdEnvironmentSpec
from fleetsim.site import Site
from fleetsim.usd import UsdScene, load_usd
from fleetsim.usd.site import site_from_stage
from fleetsim.usd.stage import SUFFIXES


def environment(sim: Any, base: Path, spec: UsdEnvironmentSpec) -> UsdScene:
    """Build the stage's boxes into `sim`; returns the scene read."""
    scene, _ = load_usd(
        sim,
        base / spec.file,
        include=spec.include,
        exclude=spec.exclude,
        purposes=spec.purposes,
        triangles=spec.triangles,
        hulls=spec.hulls,
    )
    return scene


def is_stage(spec: s.SiteSpec) -> bool:
    """Whether the site section names an OpenUSD stage."""
    if spec.format is not None:
        return spec.format == "usd"
    return spec.file is not None and Path(spec.file).suffix.lower() in SUFFIXES


def site(base: Path, spec: s.SiteSpec, read: UsdScene | None) -> Site:
    """The site of the stage `spec.file`: the environment's reading of it when it is the same
    file, else read here."""
    path = base / str(spec.file)
    same = read is not None and read.path.resolve() == path.resolve()
    source: Path | UsdScene = read if same and read is not None else path
    return site_from_stage(source, cell_size=spec.cell_size, clearance=spec.clearance)
