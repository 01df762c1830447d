"""The fuzz tests' inputs: the laps scenario of examples/12_fuzz and a stop-fault section."""

from __future__ import annotations

from pathlib import Path

LAPS = Path(__file__).parents[2] / "examples" / "12_fuzz" / "laps.yaml"


STOPS = {"robots": [{"type": "stop", "rate_per_hour": 60, "duration": [4, 12]}]}
