"""The kit's action model on hand-made cases, one rule each: multi-tick actions, waits that
pause them, the map's edges and obstacles, followers, swaps, cycles, and two robots for one
cell (decided in index order)."""

from __future__ import annotations

import numpy as np

from fleetsim.lorr.action_model import ActionModel, Pose, collide
from fleetsim.lorr.mapf import Action

F, R, C, W = Action.FW, Action.CR, Action.CCR, Action.W


def model(rows: int = 4, cols: int = 6, walls: tuple[int, ...] = (), count: int = 1) -> ActionModel:
    blocked = np.zeros(rows * cols, dtype=np.uint8)
    blocked[list(walls)] = 1
    return ActionModel(blocked, rows, cols, count)


def test_a_move_takes_its_ticks_and_a_wait_pauses_it_part_way() -> None:
    m = model(count=3)
    robot = [Pose(location=7, orientation=0)]  # (row 1, column 1), facing east
    seen = []
    for action in (F, F, W, W, F):
        tick = m.step(robot, [action])
        robot = tick.poses
        seen.append((robot[0].location, robot[0].count, m.corner(robot[0])[0]))
    third = np.float32(1) / np.float32(3)
    assert seen[0] == (7, 1, np.float32(1) + third)
    assert seen[1][:2] == (7, 2) and seen[2][:2] == seen[3][:2] == (7, 2)  # paused, part-way
    assert seen[4] == (8, 0, np.float32(2))  # the third executed tick lands on the next cell
    turn = m.step([Pose(7, 0)], [C]).poses[0]
    assert m.step([Pose(7, 0)], [R]).poses[0].orientation == 0 and turn.orientation == 0
    m1 = model()
    assert m1.step([Pose(7, 0)], [C]).poses[0].orientation == 3  # (counter 1: turns at once)
    assert m1.step([Pose(7, 3)], [R]).poses[0].orientation == 0


def test_edges_and_obstacles_make_a_request_invalid() -> None:
    m = model(walls=(8,))
    tick = m.step([Pose(7, 0), Pose(11, 0), Pose(0, 3)], [F, F, F])
    assert tick.actions == [W, W, W]
    assert set(tick.reasons.values()) == {"requested motion is invalid (boundary or hard obstacle)"}
    part_way = model(count=3).step([Pose(11, 0)], [F])  # the east edge, a third of the way
    assert part_way.actions == [W]


def test_a_follower_enters_the_cell_its_leader_leaves_the_same_tick() -> None:
    m = model()
    tick = m.step([Pose(7, 0), Pose(8, 0)], [F, F])  # a line moving east
    assert tick.actions == [F, F] and [p.location for p in tick.poses] == [8, 9]
    behind = m.step([Pose(8, 0), Pose(7, 0)], [F, F])  # the leader has the higher index
    assert behind.actions == [F, F]


def test_a_swap_and_a_rotating_cycle_are_refused() -> None:
    m = model()
    swap = m.step([Pose(7, 0), Pose(8, 2)], [F, F])  # face to face
    assert swap.actions == [W, W]
    assert swap.reasons[0] == "requested motion blocked by agent 1 (agent waited)"
    assert swap.reasons[1].startswith("occupancy-chain cycle: a0(loc=7, act=F, next=8) -> "
                                      "a1(loc=8, act=F, next=7) -> a0")  # fmt: skip
    # four robots round a 2 x 2 block, each into the next one's cell (7 -> 8 -> 14 -> 13 -> 7)
    ring = m.step([Pose(7, 0), Pose(8, 1), Pose(14, 2), Pose(13, 3)], [F, F, F, F])
    assert ring.actions == [W, W, W, W] and len(ring.reasons) == 4


def test_two_robots_for_one_cell_the_lower_index_goes() -> None:
    m = model()
    tick = m.step([Pose(7, 0), Pose(9, 2)], [F, F])  # both into cell 8
    assert tick.actions == [F, W]
    assert tick.reasons == {1: "requested motion conflicts with resolved agent 0"}
    assert [p.location for p in tick.poses] == [8, 9]


def test_touching_is_not_colliding() -> None:
    from fleetsim.lorr.action_model import Motion

    one = np.float32(1)
    a = Motion(np.float32(0), np.float32(0), np.float32(0), np.float32(0), one)
    beside = Motion(one, np.float32(0), one, np.float32(0), one)
    over = Motion(np.float32(0.5), np.float32(0), np.float32(0.5), np.float32(0), one)
    assert not collide(a, beside) and collide(a, over)
