"""Robots' `behavior:` trees of a scenario: each robot of an entry with one gets its tree
(`fleetsim.behavior`), read from the file named relative to the scenario (or a bundled tree by
its name); a tree the engine cannot run is an error naming the scenario's line and key and the
tree file's line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleetsim.behavior import Behaviors
from fleetsim.errors import ConfigError
from fleetsim.scenario.loader import BUNDLED_DIR
from fleetsim.scenario.plugins import Plugin


def tree_path(folder: Path | None, name: str) -> str:
    """A `behavior:` file: relative to the scenario's folder, else one of the bundled trees
    (`picker_shift.xml`) by its name."""
    here = (folder or Path()) / name
    bundled = BUNDLED_DIR / name
    return str(bundled if not here.exists() and bundled.exists() else here)


class BehaviorKpis(Plugin):
    """The trees' KPIs in the results (`Behaviors.kpis`)."""

    name = "behavior"

    def kpis(self) -> dict[str, Any]:
        """Trees running, succeeded, failed; ticks; the last reasons leaves failed."""
        trees = self.scene.sim.behaviors
        return trees.kpis() if trees is not None else {}


def robot_trees(loaded: Any, scene: Any, entry_of: list[int]) -> list[Plugin]:
    """Give each robot of `scene` (built from entry `entry_of[k]` of the scenario's robots)
    its entry's tree, if it has one; the plugin that reports the trees (people's too)."""
    entries = loaded.scenario.robots
    people = loaded.scenario.people
    kpis = BehaviorKpis()
    kpis.set_up_scene(scene)
    report: list[Plugin] = (
        [kpis] if people is not None and any(g.behavior for g in people.groups) else []
    )
    if not any(entries[i].behavior for i in set(entry_of)):
        return report
    trees = Behaviors.of(scene.sim)
    folder = loaded.path.parent
    for robot, i in zip(scene.robots, entry_of, strict=True):
        spec = entries[i]
        if spec.behavior is None:
            continue
        try:
            trees.add_robot(robot, tree_path(folder, spec.behavior), spec.blackboard)
        except ConfigError as exc:
            raise ConfigError(f"{loaded.at(f'robots[{i}].behavior')}: {exc}") from None
    return [kpis]
