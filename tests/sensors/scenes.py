"""Random scenes of primitive shapes and sensors outside them, for the ray-cast tests."""

from __future__ import annotations

import math

import numpy as np
import pybullet as pb

from fleetsim import MultiRobotSimulationCore, Pose, ShapeParams, SimObject, SimObjectSpawnParams
from fleetsim.sensors import Beams


def add_shapes(
    sim: MultiRobotSimulationCore, seed: int, count: int, kinds: tuple[str, ...]
) -> None:
    """`count` random boxes (some tilted), spheres and upright cylinders in an 18 m square."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        kind = str(rng.choice(kinds))
        pos = (*rng.uniform(-9, 9, 2).tolist(), float(rng.uniform(0.0, 1.0)))
        orientation = (0.0, 0.0, 0.0, 1.0)
        if kind == "box":
            shape = ShapeParams("box", half_extents=tuple(rng.uniform(0.1, 1.5, 3).tolist()))
            euler = [0.0, 0.0, float(rng.uniform(-3, 3))]
            if "tilted" in kinds and k % 3 == 0:
                euler[:2] = rng.uniform(-0.5, 0.5, 2).tolist()
            orientation = pb.getQuaternionFromEuler(euler)
        elif kind == "sphere":
            shape = ShapeParams("sphere", radius=float(rng.uniform(0.1, 1.0)))
        elif kind == "cylinder":
            shape = ShapeParams(
                "cylinder", radius=float(rng.uniform(0.1, 1.0)), height=float(rng.uniform(0.2, 2))
            )
        else:
            continue
        params = SimObjectSpawnParams(
            visual_shape=shape, collision_shape=shape, initial_pose=Pose(pos, orientation)
        )
        SimObject.from_params(params, sim)


def free_origins(
    sim: MultiRobotSimulationCore, seed: int, count: int, clearance: float = 0.05
) -> np.ndarray:
    """`count` sensor origins (x, y, z) at least `clearance` outside every body's world box."""
    rng = np.random.default_rng(seed + 1000)
    bodies = sim.world.bodies
    lo, hi = bodies["aabb_min"] - clearance, bodies["aabb_max"] + clearance
    found: list[np.ndarray] = []
    while len(found) < count:
        p = np.array([*rng.uniform(-10, 10, 2), rng.uniform(0.05, 1.0)])
        if not ((lo <= p) & (p <= hi)).all(axis=1).any():
            found.append(p)
    return np.array(found)


def pybullet_ranges(
    sim: MultiRobotSimulationCore, origins: np.ndarray, yaws: np.ndarray, beams: Beams
) -> np.ndarray:
    """PyBullet's `rayTestBatch` along the same beams: distance, inf for no hit."""
    dx, dy = beams.directions(yaws)
    start = np.repeat(origins, beams.count, axis=0)
    end = start + beams.range_max * np.stack([dx.ravel(), dy.ravel(), np.zeros(dx.size)], 1)
    sim.sync()
    client = sim.client
    pb.performCollisionDetection(physicsClientId=client)  # (its ray test reads the broadphase)
    hits: list[float] = []
    for first in range(0, len(start), 4096):
        for body, _, fraction, *_ in pb.rayTestBatch(
            start[first : first + 4096].tolist(),
            end[first : first + 4096].tolist(),
            physicsClientId=client,
        ):
            hits.append(fraction * beams.range_max if body >= 0 else math.inf)
    return np.array(hits).reshape(len(origins), beams.count)


def oracle_ranges(
    sim: MultiRobotSimulationCore, origins: np.ndarray, yaws: np.ndarray, beams: Beams
) -> np.ndarray:
    """The exact nearest hits, one beam and one body at a time in plain Python, by another
    route than the scan's: each body's cross-section at the sensor's height (a rectangle's
    four edges for an unturned-in-roll-and-pitch box, a circle for a sphere or an upright
    cylinder) met by the beam's line. Bodies around the sensor are not hit (as PyBullet)."""
    bodies = sim.world.bodies
    dx, dy = beams.directions(yaws)
    out = np.full((len(origins), beams.count), math.inf)
    for row in range(len(bodies)):
        x, y, z = bodies["pos"][row]
        lo, hi = bodies["aabb_local_min"][row], bodies["aabb_local_max"][row]
        half = (hi - lo) / 2
        qx, qy, qz, qw = bodies["quat"][row]
        assert abs(qx) < 1e-12 and abs(qy) < 1e-12, "the oracle takes upright bodies only"
        yaw = 2 * math.atan2(qz, qw)
        kind = int(bodies["ray_shape"][row])
        for s, (ox, oy, oz) in enumerate(origins.tolist()):
            if not (z + lo[2] < oz < z + hi[2]):
                continue
            if kind == 0:
                edges = _rectangle_edges(x, y, yaw, half[0], half[1])
                if _inside(edges, ox, oy):
                    continue
            else:
                slice_r = half[0] if kind == 2 else math.sqrt(half[0] ** 2 - (oz - z) ** 2)
                if math.hypot(ox - x, oy - y) <= slice_r:
                    continue
            for k in range(beams.count):
                d = (float(dx[s, k]), float(dy[s, k]))
                if kind == 0:
                    t = min((_segment(ox, oy, d, a, b) for a, b in edges), default=math.inf)
                else:
                    t = _circle(ox - x, oy - y, d, slice_r)
                out[s, k] = min(out[s, k], t)
    out[out > beams.range_max] = math.inf
    return out


def _rectangle_edges(
    x: float, y: float, yaw: float, hx: float, hy: float
) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    c, s = math.cos(yaw), math.sin(yaw)
    corners = [
        (x + c * a - s * b, y + s * a + c * b)
        for a, b in ((-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy))
    ]
    return [(corners[i], corners[(i + 1) % 4]) for i in range(4)]


def _inside(
    edges: list[tuple[tuple[float, float], tuple[float, float]]], px: float, py: float
) -> bool:
    sides = [(b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]) for a, b in edges]
    return all(v > 0 for v in sides) or all(v < 0 for v in sides)


def _segment(
    ox: float, oy: float, d: tuple[float, float], a: tuple[float, float], b: tuple[float, float]
) -> float:
    """Where the ray o + t d (t >= 0) crosses the segment a-b (Cramer's rule), else inf."""
    ex, ey = b[0] - a[0], b[1] - a[1]
    den = d[0] * -ey - d[1] * -ex
    if den == 0:
        return math.inf
    rx, ry = a[0] - ox, a[1] - oy
    t = (rx * -ey - ry * -ex) / den
    u = (d[0] * ry - d[1] * rx) / den
    return t if 0 <= u <= 1 and t >= 0 else math.inf


def _circle(px: float, py: float, d: tuple[float, float], r: float) -> float:
    """Where the ray from (px, py) relative to a circle's centre first meets it, else inf:
    the foot of the centre on the line, then back along it."""
    along = -(px * d[0] + py * d[1])
    miss2 = (px + along * d[0]) ** 2 + (py + along * d[1]) ** 2
    if along < 0 or miss2 > r * r:
        return math.inf
    return along - math.sqrt(r * r - miss2)
