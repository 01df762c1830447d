"""`IKParams`: settings of the inverse-kinematics search (see `fleetsim.agents.ik`)."""

from __future__ import annotations

from dataclasses import dataclass

from fleetsim.errors import ConfigError


@dataclass(frozen=True)
class IKParams:
    """IK solver settings. Distances in metres.

    Attributes:
        max_outer_iterations: solve / set joints / re-measure rounds per seed.
        convergence_threshold: end-effector error that ends the search.
        max_inner_iterations: iterations of each PyBullet solve.
        residual_threshold: PyBullet's own stopping residual.
        reachability_tolerance: error within which a target counts as reachable.
        seed_quartiles: restart points, as fractions of each joint's range.
        ik_joint_names: only these joints move; None = every controllable joint.
    """

    max_outer_iterations: int = 5
    convergence_threshold: float = 0.01
    max_inner_iterations: int = 100
    residual_threshold: float = 1e-4
    reachability_tolerance: float = 0.02
    seed_quartiles: tuple[float, ...] = (0.25, 0.5, 0.75)
    ik_joint_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.max_outer_iterations < 1 or self.max_inner_iterations < 1:
            raise ConfigError("IKParams iterations must be >= 1")
        for name in ("convergence_threshold", "residual_threshold", "reachability_tolerance"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"IKParams.{name} must be > 0")
        if any(not 0 <= q <= 1 for q in self.seed_quartiles):
            raise ConfigError("IKParams.seed_quartiles must lie in [0, 1]")
