"""Worlds from OpenUSD: a stage's geometry as static boxes in a simulation (`load_usd`,
`read_stage`). Needs `pip install "fleetsim[usd]"` (Pixar's usd-core); importing this package
does not import it."""

from fleetsim.usd.build import load_usd
from fleetsim.usd.stage import UsdScene, read_stage

__all__ = ["UsdScene", "load_usd", "read_stage"]
