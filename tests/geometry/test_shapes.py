import math

import numpy as np
import pybullet as pb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim import AssetNotFoundError, ConfigError, ShapeParams
from fleetsim.geometry import quat

sizes = st.floats(0.05, 2.0)
angles = st.floats(-math.pi, math.pi)


@pytest.fixture(scope="module")
def client() -> int:
    c = pb.connect(pb.DIRECT)
    yield c
    pb.disconnect(physicsClientId=c)


def pybullet_aabb(client: int, shape: ShapeParams) -> tuple[np.ndarray, np.ndarray]:
    kwargs: dict[str, object] = {
        "box": {"halfExtents": shape.half_extents},
        "sphere": {"radius": shape.radius},
        "cylinder": {"radius": shape.radius, "height": shape.height},
    }[shape.shape_type]
    geom = {"box": pb.GEOM_BOX, "sphere": pb.GEOM_SPHERE, "cylinder": pb.GEOM_CYLINDER}[
        shape.shape_type
    ]
    col = pb.createCollisionShape(
        geom,
        collisionFramePosition=shape.frame_position,
        collisionFrameOrientation=shape.frame_orientation,
        physicsClientId=client,
        **kwargs,
    )
    body = pb.createMultiBody(0, col, -1, (0, 0, 0), physicsClientId=client)
    lo, hi = pb.getAABB(body, physicsClientId=client)
    pb.removeBody(body, physicsClientId=client)
    return np.array(lo), np.array(hi)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["box", "sphere", "cylinder"]),
    st.tuples(sizes, sizes, sizes),
    st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1)),
    st.tuples(angles, angles, angles),
)
def test_local_aabb_matches_pybullet(
    client: int, kind: str, dims: tuple, offset: tuple, rpy: tuple
) -> None:
    shape = ShapeParams(
        kind,  # type: ignore[arg-type]
        half_extents=dims,
        radius=dims[0],
        height=dims[1] * 2,
        frame_position=offset,
        frame_orientation=tuple(quat.from_euler(*rpy)),  # type: ignore[arg-type]
    )
    ours = shape.local_aabb()
    assert ours is not None
    lo, hi = pybullet_aabb(client, shape)
    if kind != "cylinder":
        np.testing.assert_allclose(ours[0], lo, atol=1e-5)
        np.testing.assert_allclose(ours[1], hi, atol=1e-5)
        return
    # PyBullet bounds a cylinder by its rotated bounding box (looser); ours is exact: inside
    # PyBullet's box, and touching the cylinder's rims.
    assert np.all(ours[0] >= lo - 0.011) and np.all(ours[1] <= hi + 0.011)
    theta = np.linspace(0, 2 * np.pi, 2000)
    rim = np.stack(
        [shape.radius * np.cos(theta), shape.radius * np.sin(theta), np.zeros_like(theta)], 1
    )
    cap = np.array([0.0, 0.0, shape.height / 2])
    pts = np.concatenate([rim + cap, rim - cap])
    world = quat.rotate(np.array(shape.frame_orientation), pts) + shape.frame_position
    np.testing.assert_allclose(world.min(axis=0), ours[0], atol=1e-4)
    np.testing.assert_allclose(world.max(axis=0), ours[1], atol=1e-4)


def test_unknown_shape_type_names_the_choices() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown shape_type 'cube'.*box, sphere, cylinder, mesh"
    ):
        ShapeParams("cube")  # type: ignore[arg-type]


def test_missing_mesh_is_asset_error(tmp_path: object) -> None:
    with pytest.raises(AssetNotFoundError, match="mesh file not found"):
        ShapeParams("mesh", mesh_path="/no/such/file.obj")
    with pytest.raises(ConfigError, match="needs mesh_path"):
        ShapeParams("mesh")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"half_extents": (1, 1)},
        {"half_extents": (1, -1, 1)},
        {"shape_type": "sphere", "radius": 0},
        {"rgba_color": "red"},
    ],
)
def test_bad_dimensions(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ShapeParams(**kwargs)  # type: ignore[arg-type]


def test_from_dict_suggests_closest_key() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown key 'half_extent'.*did you mean 'half_extents'"
    ):
        ShapeParams.from_dict({"shape_type": "box", "half_extent": [1, 1, 1]})
    assert ShapeParams.from_dict({"shape_type": "sphere", "radius": 0.2}).radius == 0.2
