"""Points along an edge's `trajectory`: a NURBS curve (degree, knot vector, weighted control
points), evaluated with the Cox-de Boor recursion. The vehicle drives through these points
when an edge gives a trajectory, instead of the straight line between its nodes."""

from __future__ import annotations

import numpy as np

from fleetsim.interfaces.vda5050.messages import Trajectory

SPACING_M = 0.25  # about this far apart
MAX_POINTS = 400


def evaluate(trajectory: Trajectory, u: np.ndarray) -> np.ndarray:
    """The curve's (x, y) at parameters `u` (K,) within the knot vector's valid range."""
    p = trajectory.degree
    knots = np.asarray(trajectory.knot_vector, dtype=np.float64)
    cps = trajectory.control_points
    points = np.array([(c.x, c.y) for c in cps])
    weights = np.array([c.weight for c in cps])
    n = len(cps)
    lo, hi = knots[p], knots[n]
    u = np.clip(np.asarray(u, dtype=np.float64), lo, hi)
    # the knot span of each u: knots[span] <= u < knots[span + 1], the last span for u == hi
    span = np.clip(np.searchsorted(knots, u, side="right") - 1, p, n - 1)
    out = np.empty((len(u), 2))
    for k, (t, s) in enumerate(zip(u.tolist(), span.tolist(), strict=True)):
        basis = _basis(knots, p, s, t)  # the p + 1 functions that are non-zero at t
        w = basis * weights[s - p : s + 1]
        out[k] = w @ points[s - p : s + 1] / w.sum()
    return out


def sample(trajectory: Trajectory) -> np.ndarray:
    """Points (K, 2) from the start of the curve to its end, about `SPACING_M` apart."""
    p, n = trajectory.degree, len(trajectory.control_points)
    knots = trajectory.knot_vector
    rough = evaluate(trajectory, np.linspace(knots[p], knots[n], 65))
    length = float(np.hypot(*np.diff(rough, axis=0).T).sum())
    count = int(np.clip(np.ceil(length / SPACING_M), 2, MAX_POINTS)) + 1
    return evaluate(trajectory, np.linspace(knots[p], knots[n], count))


def problem(trajectory: Trajectory) -> str | None:
    """Why `trajectory` is not a curve this evaluator can follow, else None."""
    n, p, m = len(trajectory.control_points), trajectory.degree, len(trajectory.knot_vector)
    if m != n + p + 1:
        return (
            f"knotVector has {m} values; a degree {p} curve with {n} control points "
            f"needs {n + p + 1}"
        )
    if n <= p:
        return f"a degree {p} curve needs more than {p} control points, got {n}"
    knots = trajectory.knot_vector
    if not knots[p] < knots[n]:
        return "knotVector leaves no range to evaluate the curve on"
    return None


def _basis(knots: np.ndarray, p: int, span: int, t: float) -> np.ndarray:
    """B-spline basis functions N[span - p .. span] of degree p at t (the triangle scheme)."""
    n = np.zeros(p + 1)
    n[0] = 1.0
    left, right = np.zeros(p + 1), np.zeros(p + 1)
    for j in range(1, p + 1):
        left[j] = t - knots[span + 1 - j]
        right[j] = knots[span + j] - t
        saved = 0.0
        for r in range(j):
            den = right[r + 1] + left[j - r]
            term = n[r] / den if den != 0.0 else 0.0
            n[r] = saved + right[r + 1] * term
            saved = left[j - r] * term
        n[j] = saved
    return n
