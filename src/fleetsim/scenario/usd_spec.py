"""The scenario's `environment.usd`: an OpenUSD stage's geometry as static structure (see
docs/guides/usd.md). Written as a file name, or as a mapping with filters."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from fleetsim.scenario.spec_base import Spec

Purpose = Literal["default", "render", "proxy", "guide"]
PURPOSES: tuple[Purpose, ...] = ("default", "render")


class UsdEnvironmentSpec(Spec):
    """A stage read into static boxes (`fleetsim.usd.load_usd`), each named by its prim's
    path."""

    file: str
    """A .usd, .usda, .usdc or .usdz file, relative to the scenario file."""
    include: list[str] = Field(default_factory=lambda: ["*"])
    """Prims to read, as shell patterns on their paths (/World/Racks/*)."""
    exclude: list[str] = Field(default_factory=list)
    """Prims to leave out, as shell patterns on their paths."""
    purposes: list[Purpose] = Field(default_factory=lambda: list(PURPOSES))
    """The purposes of the geometry read (USD's `purpose`)."""
    triangles: list[str] = Field(default_factory=list)
    """Mesh prims whose triangles collide as they are (patterns on their paths)."""
    hulls: list[str] = Field(default_factory=list)
    """Mesh prims whose convex hulls collide (patterns on their paths)."""


def as_spec(value: str | UsdEnvironmentSpec) -> UsdEnvironmentSpec:
    """The section as a `UsdEnvironmentSpec` (a file name alone is one with the defaults)."""
    return UsdEnvironmentSpec(file=value) if isinstance(value, str) else value


UsdSource = Annotated[str | UsdEnvironmentSpec, AfterValidator(as_spec)]
