"""The kit's action model on hand-made cases, one rule each: multi-tick actions, waits that
pause them, the map's edges and obstacles, followers, swaps, cycles, and two robots for one
cell (decided in index order); and its compiled array pass against it on dense random scenes."""

from __future__ import annotations

import random

import numpy as np

from fleetsim.lorr import model_kernel
from fleetsim.lorr.action_model import ActionModel, Pose, collide, step_arrays
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
    assert swap.reasons[1].startswith(
        "occupancy-chain cycle: a0(loc=7, act=F, next=8) -> a1(loc=8, act=F, next=7) -> a0"
    )
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


def _scene(
    seed: int, rows: int = 8, cols: int = 9, n: int = 30
) -> tuple[ActionModel, list[Pose], list[int]]:
    """A dense random scene: 30 robots among 8 obstacles on 72 cells, some part-way along an
    edge or a turn, each asking for a random action."""
    rng = random.Random(seed)
    blocked = np.zeros(rows * cols, dtype=np.uint8)
    blocked[rng.sample(range(rows * cols), 8)] = 1
    free = [c for c in range(rows * cols) if not blocked[c]]
    cells = rng.sample(free, n)
    poses, requests = [], []
    for cell in cells:
        heading, count = rng.randrange(4), rng.randrange(3)
        ahead = cell + (1, cols, -1, -cols)[heading]
        can_move = (
            0 <= ahead < rows * cols
            and not blocked[ahead]
            and ahead not in cells
            and (heading in (1, 3) or ahead // cols == cell // cols)
        )
        moving = count > 0 and can_move and rng.random() < 0.5
        poses.append(Pose(cell, heading, count, moving))
        requests.append(rng.choice([0, 0, 0, 1, 2, 3]))
    return ActionModel(blocked, rows, cols, 3), poses, requests


def test_the_compiled_pass_decides_as_the_model_does() -> None:
    """On 200 dense random scenes the array kernel (compiled with Numba, else run as Python)
    gives the robot-by-robot model's actions; compiled, also its poses, reasons and cycles."""
    cycles = reasons = 0
    for seed in range(200):
        m, poses, requests = _scene(seed)
        tick = m.step(poses, requests)
        arrays = [
            np.array([getattr(p, f) for p in poses], dtype=d)
            for f, d in (
                ("location", np.int64),
                ("orientation", np.int64),
                ("count", np.int64),
                ("moving", np.bool_),
            )
        ]
        req = np.array(requests, dtype=np.int64)
        went = model_kernel.resolve(
            *arrays,
            req,
            m.blocked.astype(np.uint8),
            m.rows,
            m.cols,
            m.max_count,
            m.size,
            np.float32(1e-6),
        )[0]
        assert [int(a) if w else 3 for a, w in zip(requests, went, strict=True)] == tick.actions
        compiled = step_arrays(m, *arrays, req)
        if compiled is None:
            continue  # (no Numba: the Python run above is the check)
        assert compiled.actions.tolist() == [int(a) for a in tick.actions]
        assert compiled.location.tolist() == [p.location for p in tick.poses]
        assert compiled.orientation.tolist() == [p.orientation for p in tick.poses]
        assert compiled.count.tolist() == [p.count for p in tick.poses]
        assert compiled.moving.tolist() == [p.moving for p in tick.poses]
        assert compiled.reasons == tick.reasons and compiled.cycles == tick.cycles
        cycles += len(tick.cycles)
        reasons += len(tick.reasons)
    assert cycles == 0 or cycles > 20  # (scenes dense enough for cycles, when compiled)
    assert reasons == 0 or reasons > 1000
