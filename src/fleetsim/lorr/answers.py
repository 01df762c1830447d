"""Entries' answers read as the kit reads them, checked as it does not: each function takes
what an entry returned and gives the loop its values, or raises an `EntryError` that names the
entry (`who`), the call and the tick, and says what was wrong (the kit would crash, abort, or
read past the end of a list)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetsim.errors import EntryError
from fleetsim.lorr.action_model import SYMBOL
from fleetsim.lorr.mapf import Action, State

ACTIONS: dict[Any, Action] = {**{a: a for a in Action}, **{int(a): a for a in Action}}


def ints(raw: Any, where: str, shape: str) -> list[int]:
    """`raw` as whole numbers (`where`: "who: call at tick t")."""
    try:
        return [int(v) for v in raw]
    except (TypeError, ValueError) as exc:
        raise EntryError(f"{where} must return {shape}: {exc}") from exc


def plan_actions(raw: Any, where: str) -> list[list[Action]]:
    """A planner's answer: one list of actions a robot (Action members or 0-4)."""
    try:
        rows = list(raw)
    except TypeError as exc:
        raise EntryError(f"{where} must return a list of action lists, one a robot: {exc}") from exc
    try:
        return [[ACTIONS[v] for v in row] for row in rows]
    except (KeyError, TypeError):
        pass
    out = []
    for robot, row in enumerate(rows):
        values = ints(row, where, f"a list of actions for robot {robot}")
        for v in values:
            if v not in ACTIONS:
                raise EntryError(
                    f"{where} gives robot {robot} action {v}: actions are "
                    "MAPF.Action FW, CR, CCR, W or NA (0-4)"
                )
        out.append([ACTIONS[v] for v in values])
    return out


def check_staged(
    staged: list[list[Any]],
    before: list[list[Action]],
    plan: list[list[Action]],
    team: int,
    where: str,
) -> None:
    """The kit's rule for `process_new_plan`: each robot's staged actions, waits aside, are a
    prefix of the ones it had followed by its new plan (an executor may drop the tail of a
    queue, never rewrite it). The queues' values are made `Action`s in place."""
    if len(staged) != team:
        raise EntryError(f"{where} left {len(staged)} staged queues for {team} robots")
    for robot, queue in enumerate(staged):
        if any(a.__class__ is not Action for a in queue):
            try:
                queue[:] = [ACTIONS[a] for a in queue]
            except (KeyError, TypeError) as exc:
                raise EntryError(
                    f"{where} staged a value that is not an action for robot {robot}: {exc}"
                ) from exc
        old = before[robot]
        new = plan[robot] if robot < len(plan) else []
        if queue == (old + new)[: len(queue)]:
            continue  # (kept and appended: the common case)
        allowed = [a for a in old + new if a != Action.W]
        kept = [a for a in queue if a != Action.W]
        if kept != allowed[: len(kept)]:
            raise EntryError(
                f"{where}: robot {robot}'s staged actions {letters(queue)} are not its staged "
                f"actions {letters(old)} followed by the new plan {letters(new)} (W aside): "
                "the kit aborts the run"
            )


def predicted_states(raw: Any, team: int, where: str) -> list[State]:
    """An executor's predictions: one `MAPF.State` a robot."""
    try:
        states = list(raw)
    except TypeError as exc:
        raise EntryError(f"{where} must return a list of MAPF.State, one a robot: {exc}") from exc
    if len(states) != team or not all(s.__class__ is State for s in states):
        raise EntryError(f"{where} must return a list of {team} MAPF.State (one a robot)")
    return states


def commands(raw: Any, team: int, where: str) -> np.ndarray:
    """An executor's GO/STOP for every robot, as int64."""
    try:
        out = np.fromiter(raw, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise EntryError(
            f"{where} must return a list of ExecutionCommand, one a robot: {exc}"
        ) from exc
    if len(out) != team:
        raise EntryError(f"{where} returned {len(out)} commands for {team} robots")
    return out


def letters(actions: list[Action]) -> str:
    """Actions as the kit's letters: [F R C W]."""
    return "[" + " ".join(SYMBOL[a] for a in actions) + "]"
