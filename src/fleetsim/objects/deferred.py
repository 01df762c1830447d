"""Bodies kept only in the arrays until PyBullet is needed (`SimulationParams.body_creation`).

A robot whose collisions the arrays answer exactly (a single box, or a mobile robot's footprint)
needs no PyBullet body under kinematics, and making one is most of the cost of spawning a fleet
(time and memory). With lazy creation, the first robot loaded from a file is a real PyBullet body;
what its row learnt about it (local box, inertial offset, shape facts, mass) is kept as a
`Template`, and later robots from the same recipe are rows only, with no body id. A row gets its
PyBullet body, at its current pose, the first time something asks PyBullet about it: its
`object_id`, a narrow-phase query on a non-box pair, a joint, IK, a camera image, `sim.sync()`.
Static boxes (`SimObject.static_boxes`: a site's or a twin's structure) wait the same way, each
size and colour a `BoxRecipe`; those that are made together are made in one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# The columns every body made from one recipe shares (everything but the pose and role).
SHARED_COLUMNS = (
    "aabb_local_min",
    "aabb_local_max",
    "com_pos",
    "com_quat",
    "has_com_offset",
    "exact_box",
    "footprint",
    "mass",
)


class Maker(Protocol):
    """What a recipe needs from the backend."""

    def load_urdf(self, path: str, position: Any, orientation: Any, fixed_base: bool) -> int:
        """Load a URDF body; its PyBullet id."""

    def prepare_agent_body(self, body_id: int, mass: float | None, kinematic: bool) -> float:
        """Set a loaded robot body up for the simulation (mass, kinematic joints); its mass."""

    def remove_body(self, body_id: int) -> None:
        """Remove a body."""

    def create_boxes(
        self, half_extents: Any, positions: Any, orientations: Any, rgba: Any
    ) -> np.ndarray:
        """Bodies of mass 0 for boxes; their ids."""


@dataclass(frozen=True)
class UrdfRecipe:
    """How an `Agent`'s body is made: the resolved URDF file, a fixed base or not, and the
    spawn params' mass (None keeps the URDF's)."""

    path: str
    fixed_base: bool
    mass: float | None

    def create(self, backend: Maker, position: list[float], orientation: list[float]) -> int:
        """Load the body with its link frame at the given pose; returns its PyBullet id."""
        body = backend.load_urdf(self.path, position, orientation, self.fixed_base)
        try:
            backend.prepare_agent_body(body, self.mass, kinematic=False)
        except BaseException:
            backend.remove_body(body)
            raise
        return body


@dataclass(frozen=True)
class BoxRecipe:
    """How a static box waiting for its body is made: its half extents and colour."""

    half_extents: tuple[float, float, float]
    rgba: tuple[float, float, float, float]

    def create(self, backend: Maker, position: list[float], orientation: list[float]) -> int:
        """Make the box at the given pose; returns its PyBullet id."""
        return int(self.create_many(backend, np.array([position]), np.array([orientation]))[0])

    def create_many(
        self, backend: Maker, positions: np.ndarray, orientations: np.ndarray
    ) -> np.ndarray:
        """Make copies of the box at the given poses (N, 3) and (N, 4): their ids."""
        halves = np.tile(np.array(self.half_extents), (len(positions), 1))
        return np.asarray(backend.create_boxes(halves, positions, orientations, self.rgba))


@dataclass(frozen=True)
class Template:
    """One recipe's index and the shared columns measured from its first real body."""

    recipe: int
    columns: dict[str, np.ndarray]


class Recipes:
    """One world's recipes and the templates learnt for them (cleared on reset)."""

    def __init__(self) -> None:
        self.recipes: list[UrdfRecipe | BoxRecipe] = []
        self._templates: dict[UrdfRecipe, Template] = {}
        self._boxes: dict[BoxRecipe, int] = {}

    def __bool__(self) -> bool:
        return bool(self.recipes)

    def template(self, recipe: UrdfRecipe) -> Template | None:
        """What the first body of `recipe` taught (boxes, inertial frame, shape), or None."""
        return self._templates.get(recipe)

    def learn(self, recipe: UrdfRecipe, columns: dict[str, np.ndarray]) -> Template:
        """Remember the shared columns of a real body made by `recipe`."""
        template = Template(len(self.recipes), {k: np.copy(columns[k]) for k in SHARED_COLUMNS})
        self.recipes.append(recipe)
        self._templates[recipe] = template
        return template

    def box(self, recipe: BoxRecipe) -> int:
        """The index of a box recipe (added the first time it is asked for)."""
        if recipe not in self._boxes:
            self._boxes[recipe] = len(self.recipes)
            self.recipes.append(recipe)
        return self._boxes[recipe]

    def clear(self) -> None:
        """Forget every template (the world was emptied)."""
        self.recipes.clear()
        self._templates.clear()
        self._boxes.clear()
