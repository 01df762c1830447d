import math

import pytest

from fleetsim import Path, Pose


def test_from_positions_faces_along_segments() -> None:
    path = Path.from_positions([(0, 0), (1, 0), (1, 1)])
    assert len(path) == 3
    assert [w.position for w in path] == [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
    assert path[0].yaw == pytest.approx(0.0)
    assert path[1].yaw == pytest.approx(math.pi / 2)
    assert path[2].yaw == pytest.approx(math.pi / 2)
    assert path.length == pytest.approx(2.0)


def test_rectangle_is_closed_loop() -> None:
    path = Path.rectangle((1, 2, 0.5), width=4, height=2)
    assert path[0].position == path[-1].position
    assert path.length == pytest.approx(12.0)
    assert all(w.z == 0.5 for w in path)


def test_circle_length_approaches_circumference() -> None:
    path = Path.circle((0, 0), radius=2.0, num_points=64)
    assert len(path) == 65
    assert path.length == pytest.approx(2 * math.pi * 2.0, rel=0.01)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Path([]),
        lambda: Path([(0, 0, 0)]),  # type: ignore[list-item]
        lambda: Path.from_positions([[0, 0, 0, 0]]),
        lambda: Path.from_positions([(0, math.inf)]),
        lambda: Path.rectangle((0, 0), width=0, height=1),
        lambda: Path.circle((0, 0), radius=1, num_points=2),
    ],
)
def test_bad_paths_rejected(build: object) -> None:
    with pytest.raises(ValueError):
        build()  # type: ignore[operator]


def test_waypoints_are_poses() -> None:
    assert all(isinstance(w, Pose) for w in Path.from_positions([(0, 0, 0), (1, 1, 1)]))
