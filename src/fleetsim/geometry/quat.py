"""Vectorised quaternion and yaw helpers. Quaternions are (x, y, z, w), like PyBullet.

Every function takes arrays of shape (..., 4) / (..., 3) / (...) and broadcasts over the leading
dimensions, so the same code serves one pose or a whole fleet.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fleetsim.errors import ConfigError

FloatArray = NDArray[np.float64]


def normalize(q: ArrayLike) -> FloatArray:
    """Unit quaternions, shape (..., 4). Raises ValueError on a zero or non-finite quaternion."""
    q = np.asarray(q, dtype=np.float64)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if not np.all(np.isfinite(norm)) or np.any(norm < 1e-12):
        raise ConfigError("quaternion must be finite and non-zero (x, y, z, w)")
    return np.asarray(q / norm, dtype=np.float64)


def multiply(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Hamilton product a * b, shape (..., 4): rotation b followed by rotation a."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def conjugate(q: ArrayLike) -> FloatArray:
    """The inverse rotation of unit quaternions, shape (..., 4)."""
    out: FloatArray = np.asarray(q, dtype=np.float64) * np.array([-1.0, -1.0, -1.0, 1.0])
    return out


def rotate(q: ArrayLike, v: ArrayLike) -> FloatArray:
    """Vectors v (..., 3) rotated by unit quaternions q (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def to_matrix(q: ArrayLike) -> FloatArray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    flat = q.reshape(-1, 4)
    x, y, z, w = np.ascontiguousarray(flat.T)  # contiguous columns: ~4x faster than views
    x2, y2, z2 = 2 * x, 2 * y, 2 * z
    xx, yy, zz = x * x2, y * y2, z * z2
    xy, xz, yz = x * y2, x * z2, y * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    m = np.empty((len(flat), 3, 3))
    m[:, 0, 0] = 1 - yy - zz
    m[:, 0, 1] = xy - wz
    m[:, 0, 2] = xz + wy
    m[:, 1, 0] = xy + wz
    m[:, 1, 1] = 1 - xx - zz
    m[:, 1, 2] = yz - wx
    m[:, 2, 0] = xz - wy
    m[:, 2, 1] = yz + wx
    m[:, 2, 2] = 1 - xx - yy
    return m.reshape(*q.shape[:-1], 3, 3)


def from_euler(roll: ArrayLike, pitch: ArrayLike, yaw: ArrayLike) -> FloatArray:
    """Quaternions (..., 4) from roll/pitch/yaw in radians (PyBullet's convention: Rz Ry Rx)."""
    hr = np.asarray(roll, dtype=np.float64) / 2
    hp = np.asarray(pitch, dtype=np.float64) / 2
    hy = np.asarray(yaw, dtype=np.float64) / 2
    cr, sr = np.cos(hr), np.sin(hr)
    cp, sp = np.cos(hp), np.sin(hp)
    cy, sy = np.cos(hy), np.sin(hy)
    return np.stack(
        (
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ),
        axis=-1,
    )


def to_euler(q: ArrayLike) -> FloatArray:
    """Roll, pitch, yaw (..., 3) in radians of unit quaternions (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack((roll, pitch, yaw), axis=-1)


def yaw_of(q: ArrayLike) -> FloatArray:
    """Heading about +z in radians, shape (...), of unit quaternions (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]  # (views: no moveaxis call)
    yaw: FloatArray = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return yaw


def from_yaw(yaw: ArrayLike) -> FloatArray:
    """Quaternions (..., 4) of pure rotations about +z by `yaw` radians."""
    half = np.asarray(yaw, dtype=np.float64) / 2
    q = np.zeros((*half.shape, 4))  # (filled in place: np.stack costs more at fleet sizes)
    q[..., 2] = np.sin(half)
    q[..., 3] = np.cos(half)
    return q


def wrap_angle(angle: ArrayLike) -> FloatArray:
    """Angles wrapped to [-pi, pi)."""
    a = np.asarray(angle, dtype=np.float64)
    return np.asarray((a + np.pi) % (2 * np.pi) - np.pi, dtype=np.float64)


def from_matrix(m: ArrayLike) -> FloatArray:
    """Unit quaternions (..., 4) (x, y, z, w) of rotation matrices (..., 3, 3) (`to_matrix`'s
    inverse): each from the largest of w, x, y, z (Shepperd's method), so all stay exact."""
    m = np.asarray(m, dtype=np.float64)
    r = m.reshape(-1, 3, 3)
    trace = r[:, 0, 0] + r[:, 1, 1] + r[:, 2, 2]
    diag = np.stack((r[:, 0, 0], r[:, 1, 1], r[:, 2, 2], trace), axis=1)
    pick = np.argmax(diag, axis=1)  # 0, 1, 2: x, y or z is the largest; 3: w
    q = np.empty((len(r), 4))
    s = np.sqrt(np.maximum(1.0 + 2.0 * diag[np.arange(len(r)), pick] - trace, 1e-300)) * 2
    for i in range(3):  # x, y or z the largest: that one from the diagonal, the rest from it
        j, k = (i + 1) % 3, (i + 2) % 3
        mine = pick == i
        q[mine, i] = s[mine] / 4
        q[mine, j] = (r[mine, i, j] + r[mine, j, i]) / s[mine]
        q[mine, k] = (r[mine, i, k] + r[mine, k, i]) / s[mine]
        q[mine, 3] = (r[mine, k, j] - r[mine, j, k]) / s[mine]
    mine = pick == 3  # w the largest
    q[mine, 3] = s[mine] / 4
    q[mine, 0] = (r[mine, 2, 1] - r[mine, 1, 2]) / s[mine]
    q[mine, 1] = (r[mine, 0, 2] - r[mine, 2, 0]) / s[mine]
    q[mine, 2] = (r[mine, 1, 0] - r[mine, 0, 1]) / s[mine]
    return normalize(q).reshape(*m.shape[:-2], 4)
