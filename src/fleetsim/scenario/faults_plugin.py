"""The `faults:` section at work: a world plugin the builder adds, which applies the section's
plan with a `FaultInjector` once every other plugin is ready (the fleet manager's batteries
and chargers among them) and reports the faults with the run's results (the `faults` KPIs and
table)."""

from __future__ import annotations

from typing import Any

from fleetsim.faults import FaultInjector
from fleetsim.fleet import FleetManager
from fleetsim.scenario.faults_spec import FaultsSpec, delays_of, plan_of
from fleetsim.scenario.plugins import Plugin


class FaultsPlugin(Plugin):
    """Applies a scenario's `faults:` section; `injector` is the `FaultInjector`."""

    name = "faults"

    def __init__(self, spec: FaultsSpec, others: list[Plugin]) -> None:
        super().__init__()
        self.spec, self.others = spec, others
        self.injector: FaultInjector | None = None

    def initialize(self) -> None:
        """Make the injector over the scene's robots (and the fleet manager, if any)."""
        sim = self.scene.sim
        managers = [
            m
            for m in (getattr(p, "manager", None) for p in self.others)
            if isinstance(m, FleetManager)
        ]
        seed = sim.params.seed if sim.params.seed is not None else 0
        self.injector = FaultInjector(
            sim,
            self.scene.robots,
            plan_of(self.spec, seed),
            managers[0] if managers else None,
            delays_of(self.spec, seed),
        ).attach()

    def kpis(self) -> dict[str, Any]:
        """Faults by kind, and those going on at the end."""
        return self.injector.kpis() if self.injector is not None else {}

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every fault: time, kind, target, duration, amount, until."""
        return {"faults": self.injector.rows()} if self.injector is not None else {}
