"""MovingAI `.map` files: a graph over free cells, obstacles as merged rectangles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim.errors import ConfigError
from fleetsim.site.graph import RouteError
from fleetsim.site.movingai import _rectangles, load_movingai

from .maps import SMALL


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.map"
    path.write_text(text)
    return path


def test_a_small_map(tmp_path: Path) -> None:
    grid = load_movingai(write(tmp_path, SMALL), cell_size=2.0)
    graph = grid.graph
    assert len(graph) == 24 - 8  # free cells
    assert (grid.width, grid.height) == (6, 4)
    # Cell centres: row 0 is the top; x to the right, y up, 2 m cells.
    assert graph.xy[graph.node("r0_c0")].tolist() == [1.0, 7.0]
    assert graph.xy[graph.node("r3_c5")].tolist() == [11.0, 1.0]
    with pytest.raises(ConfigError, match="cell 'r0_c2' is blocked"):
        graph.node("r0_c2")  # a blocked cell
    route = graph.route("r0_c0", "r0_c4")  # around the block, down through row 2
    assert route.length == pytest.approx(2.0 * 8)
    assert grid.cell_of(*route.positions[3]) == (2, 1)
    for x, y in route.positions:
        assert not grid.blocked[grid.cell_of(x, y)]
    with pytest.raises(RouteError):
        load_movingai(write(tmp_path, "type octile\nheight 1\nwidth 3\nmap\n.@.\n")).graph.route(
            "r0_c0", "r0_c2"
        )


def covered(rect: np.ndarray, height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), dtype=int)
    for x0, y0, x1, y1 in rect:
        rows = slice(height - round(y1), height - round(y0))
        mask[rows, round(x0) : round(x1)] += 1
    return mask


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.data())
def test_rectangles_cover_each_blocked_cell_exactly_once(
    h: int, w: int, data: st.DataObject
) -> None:
    cells = data.draw(st.lists(st.booleans(), min_size=h * w, max_size=h * w))
    blocked = np.array(cells, dtype=bool).reshape(h, w)
    rect = _rectangles(blocked, 1.0)
    assert np.array_equal(covered(rect, h, w), blocked.astype(int))
    assert len(rect) <= blocked.sum()


def test_solid_blocks_become_one_rectangle() -> None:
    blocked = np.zeros((50, 40), dtype=bool)
    blocked[10:30, 5:25] = True
    rect = _rectangles(blocked, 0.5)
    assert rect.tolist() == [[2.5, 10.0, 12.5, 20.0]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("type octile\nheight 3\nwidth 3\nmap\n...\n...\n", "height 3, but there are 2 rows"),
        ("type octile\nheight 2\nwidth 3\nmap\n...\n....\n", "line 6: row 1 has 4 cells"),
        ("type octile\nheight 1\nwidth 3\nmap\n.x.\n", "line 5: unknown cell 'x' at column 1"),
        ("hello\n", "not a MovingAI map"),
        ("type octile\nwidth 3\nmap\n...\n", "needs 'height' and 'width'"),
    ],
)
def test_broken_maps_name_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_movingai(write(tmp_path, text))


def test_cells_that_are_not_nodes_say_why(tmp_path: Path) -> None:
    graph = load_movingai(write(tmp_path, SMALL)).graph
    assert graph.names[graph.node("r0_c0")] == "r0_c0"
    with pytest.raises(ConfigError, match="cell 'r0_c2' is blocked: choose a free cell"):
        graph.node("r0_c2")
    with pytest.raises(ConfigError, match=r"'r9_c0' is outside the map \(4 rows x 6 columns\)"):
        graph.node("r9_c0")
    with pytest.raises(ConfigError, match="grid map nodes are named r<row>_c<col>"):
        graph.node("dock")
