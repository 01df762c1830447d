"""fleetsim's default executor: follows the plan and keeps its order of passing.

Every planned action is staged but waits (a robot with nothing staged waits anyway); none is
dropped, as a plan's moves hang together (the planner keeps the queues short). Each cell
keeps the robots planned to pass through it, in the plan's order (the step they enter it,
then robot index; plans later than earlier ones): a robot is told GO into a cell only once
every robot before it there has left. Turns and waits always GO. So robots never collide and
delays never deadlock them (an action-dependency graph, as in robust execution of MAPF
plans). The states it predicts are where each robot will be once its staged actions are done,
so the planner plans on from there."""

from __future__ import annotations

from collections import deque
from typing import Any

import MAPF


class pyExecutor:  # noqa: N801 (the kit's class name)
    """Stage the plan; GO when the cell ahead is the robot's turn."""

    def __init__(self) -> None:
        self.env: Any = None
        self.started = False

    def initialize(self, preprocess_time_limit: int) -> None:
        """The map's moves."""
        self.moves = (1, self.env.cols, -1, -self.env.cols)

    def start(self) -> None:
        """Every robot holds its start cell; its plan ends where it stands."""
        states = self.env.system_states
        self.visits: dict[int, deque[int]] = {}
        for robot, state in enumerate(states):
            self.visits.setdefault(state.location, deque()).append(robot)
        self.at = [s.location for s in states]
        self.end = [(s.location, s.orientation) for s in states]
        self.started = True

    def process_new_plan(self, sync_time_limit: int, plan: Any, staged_actions: Any) -> list[Any]:
        """Stage the plan's actions; queue the cells they enter; the queues' end states."""
        if not self.started:
            self.start()
        entering = []
        for robot in range(self.env.num_of_agents):
            queue = staged_actions[robot]
            location, heading = self.end[robot]
            actions = plan.actions[robot] if robot < len(plan.actions) else []
            for step, action in enumerate(actions):
                if action == MAPF.Action.W:
                    continue
                if action == MAPF.Action.FW:
                    location += self.moves[heading]
                    entering.append((step, robot, location))
                elif action == MAPF.Action.CR:
                    heading = (heading + 1) % 4
                elif action == MAPF.Action.CCR:
                    heading = (heading + 3) % 4
                else:
                    continue
                queue.append(action)
            self.end[robot] = (location, heading)
        for _, robot, cell in sorted(entering):
            self.visits.setdefault(cell, deque()).append(robot)
        return [MAPF.State(location, -1, heading) for location, heading in self.end]

    def next_command(self, exec_time_limit: int) -> list[Any]:
        """GO unless the cell ahead still has robots before this one."""
        if not self.started:
            self.start()
        go, stop = MAPF.ExecutionCommand.GO, MAPF.ExecutionCommand.STOP
        commands = []
        staged = self.env.staged_actions
        for robot, state in enumerate(self.env.system_states):
            if state.location != self.at[robot]:  # it has left its last cell
                left = self.visits[self.at[robot]]
                if left and left[0] == robot:
                    left.popleft()
                self.at[robot] = state.location
            queue = staged[robot]
            if queue and queue[0] == MAPF.Action.FW:
                target = state.location + self.moves[state.orientation]
                waiting = self.visits.get(target)
                commands.append(go if waiting and waiting[0] == robot else stop)
            else:
                commands.append(go)
        return commands
