"""`Behaviors`: BehaviorTree.CPP v4 trees (through behaviortreepy) for a simulation's people and
robots, with fleetsim's nodes as leaves (`fleetsim.behavior.leaves`).

Each person or robot given a tree has its own tree and blackboard, made from a file read once
(`fleetsim.behavior.trees`). Trees are ticked after a step, not every step: when one of their
leaves' states changed (a person or robot arrived, an action ended, a wait ran out) and, for
trees with leaves that are looked at rather than woken (conditions, waiting for a door or a
robot, charging: not `leaves.WAKING`), at `rate_hz`. A tree that ends (SUCCESS or
FAILURE) is ticked no more; the event `behavior_finished` says how it ended. A person whose
tree ended without `Leave` stands where it is.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fleetsim.behavior import leaves as L  # noqa: N812 (the leaves' table: L.LEAVES)
from fleetsim.behavior.trees import PREFIX, BehaviorError, Prepared, read
from fleetsim.errors import ConfigError
from fleetsim.fleet.battery import Batteries, BatteryParams

LEAF = "fleetsim.leaf."  # the engine's node under each leaf's SubTree ("fleetsim.GoTo")


def _engine() -> Any:
    try:
        import behaviortreepy
    except ImportError:
        raise ConfigError("behaviour trees need BehaviorTree.CPP's Python binding: "
                          "pip install 'fleetsim[bt]'") from None  # fmt: skip
    return behaviortreepy


@dataclass
class Owner:
    """A person or robot and its tree: `body` the person's id or the robot (an `Agent`)."""

    index: int
    kind: str  # "person" or "robot"
    body: Any
    name: str
    source: str
    tree: Any
    board: Any = None  # (its blackboard)
    at: str = ""  # (a person: the node it stands at, from which its next walk is routed)
    robot_row: int = -1  # (a robot: its row of the batteries)
    status: str = L.RUNNING
    alive: bool = True
    ticks: int = 0
    pending: set[float] = field(default_factory=set)  # (when its tree is to be ticked)
    periodic: float = math.inf  # (of those, the rate's next tick)
    polls: bool = True  # (its tree has leaves that are looked at, not woken: ticked at a rate)
    state: dict[int, dict[str, Any]] = field(default_factory=dict)  # each leaf's, by node uid


class Behaviors:
    """The behaviour trees of `sim`'s people and robots (`sim.behaviors`). `rate_hz`: how often
    a running tree is ticked when nothing it waits for changed; `battery`: the robots'
    batteries (`BatteryAbove`, `Charge`)."""

    def __init__(
        self, sim: Any, rate_hz: float = 2.0, battery: BatteryParams | None = None
    ) -> None:
        if not (math.isfinite(rate_hz) and rate_hz > 0):
            raise ConfigError(f"Behaviors: rate_hz must be > 0, got {rate_hz!r}")
        self.bt = _engine()
        if sim.behaviors is not None:
            raise ConfigError("this simulation has its behaviour trees already: sim.behaviors")
        sim.behaviors = self
        self.sim, self.period = sim, 1.0 / rate_hz
        self.owners: list[Owner] = []
        self.walking: set[int] = set()  # people walking for a leaf (their arrival wakes it)
        self.notes: list[str] = []  # why leaves failed, newest last
        self.batteries = Batteries(battery or BatteryParams(), 0)
        self._robots: list[Owner] = []
        self._robot_handles = np.empty(0, dtype=np.int64)  # (their bodies, as `_robots`)
        self._person_of = np.empty(0, dtype=np.int64)  # (each owner's person id; -1: a robot)
        self._factories: dict[str, tuple[Any, Prepared]] = {}
        self._queue: list[tuple[float, int]] = []  # (when, owner) to tick
        self._current: Owner | None = None
        self._error: Exception | None = None  # (raised in a leaf, inside the engine's tick)
        self._outputs: dict[str, str] = {}  # (what the leaf being ticked writes)
        seed = sim.params.seed if sim.params.seed is not None else 0
        self.rng = np.random.default_rng([seed, 8128])  # (ChoosePlace's draws)
        self._last_xy = np.empty((0, 2))
        self._hooks = [("post_step", sim.on("post_step", lambda *_: self.step())),
                       ("reset", sim.on("reset", lambda *_: self._let_go()))]  # fmt: skip

    def _let_go(self) -> None:
        """The simulation was reset: its trees are gone (its `behaviors` too), and these
        hooks with them."""
        for event, handler in self._hooks:
            self.sim.events.off(event, handler)
        self._hooks = []

    # -- adding trees ----------------------------------------------------------------------

    def _factory(self, tree: str | Path, who: str) -> tuple[Any, Prepared]:
        key = str(tree)
        if key not in self._factories:
            prepared = read(tree, L.LEAVES)
            factory = self.bt.BehaviorTreeFactory()
            for name in L.LEAVES:
                self._register(factory, name)
            wrappers = "".join(f'<BehaviorTree ID="{PREFIX}{n}"><{LEAF}{n}/></BehaviorTree>'
                               for n in L.LEAVES)  # fmt: skip
            factory.register_behavior_tree_from_text(f'<root BTCPP_format="4">{wrappers}</root>')
            try:
                factory.register_behavior_tree_from_text(prepared.text)
            except RuntimeError as exc:
                raise BehaviorError(prepared.source, 0, f"BehaviorTree.CPP: {exc}") from None
            self._factories[key] = (factory, prepared)
        factory, prepared = self._factories[key]
        wrong = sorted(n for n in prepared.uses if L.LEAVES[n].who not in ("both", who))
        if wrong:
            raise BehaviorError(prepared.source, 0, f"<{wrong[0]}> is for "
                                f"{L.LEAVES[wrong[0]].who}s, not {who}s")  # fmt: skip
        return factory, prepared

    def _register(self, factory: Any, name: str) -> None:
        bt = self.bt
        status = {L.RUNNING: bt.NodeStatus.RUNNING, L.SUCCESS: bt.NodeStatus.SUCCESS,
                  L.FAILURE: bt.NodeStatus.FAILURE}  # fmt: skip
        spec = L.LEAVES[name]

        def call(node: Any) -> Any:
            owner = self._current
            assert owner is not None
            state = owner.state.setdefault(node.uid(), {})
            work = L.CONDITIONS[name] if spec.kind == "condition" else L.ACTIONS[name]
            self._outputs = {}
            try:
                answer = work(self, owner, state, self._ports(node, spec))
                bb = node.config().blackboard
                for key, value in self._outputs.items():
                    bb.set_string(key, value)
            except ConfigError as exc:  # (a port's value from the blackboard, say)
                self.note(owner, f"<{name}>: {exc}")
                answer = L.FAILURE
            except Exception as exc:  # (raised again once the engine's tick is over)
                self._error = self._error or exc
                answer = L.FAILURE
            if answer != L.RUNNING:
                owner.state.pop(node.uid(), None)
            return status[answer]

        def halted(node: Any) -> None:
            owner = self._current
            if owner is None:
                return
            state = owner.state.pop(node.uid(), {})
            stop = L.HALTS.get(name)
            if stop is not None and state:
                stop(self, owner, state)

        if spec.kind == "condition":
            factory.register_simple_condition(LEAF + name, call)
        else:
            factory.register_simple_stateful_action(LEAF + name, call, call, halted)

    def _ports(self, node: Any, spec: Any) -> dict[str, str]:
        """The leaf's ports as text: literals, or blackboard entries of any type."""
        bb = node.config().blackboard
        out: dict[str, str] = {}
        for port, info in spec.ports.items():
            if info.kind == "output":
                continue
            for getter in (bb.get_string, bb.get_double, bb.get_int, bb.get_bool):
                try:
                    out[port] = str(getter(port))
                    break
                except Exception:
                    continue
            else:
                if info.default is None:
                    raise ConfigError(f"port {port} is not set (an entry of the blackboard "
                                      "that nothing wrote?)")  # fmt: skip
                out[port] = info.default
        return out

    def check(self, tree: str | Path, who: str) -> None:
        """Read the tree in file `tree` (or XML text) for a `who` ("person" or "robot") now: a
        `BehaviorError` naming the file and line for a node or port it does not have."""
        self._factory(tree, who)

    def _add(self, kind: str, body: Any, name: str, tree: str | Path,
             blackboard: Mapping[str, Any] | None) -> Owner:  # fmt: skip
        factory, prepared = self._factory(tree, kind)
        board = self.bt.Blackboard.create()
        for key, value in (blackboard or {}).items():
            if isinstance(value, bool):
                board.set_bool(key, value)
            elif isinstance(value, int):
                board.set_int(key, value)
            elif isinstance(value, float):
                board.set_double(key, value)
            else:
                board.set_string(key, str(value))
        try:
            tree_obj = factory.create_tree(prepared.main, board)
        except RuntimeError as exc:
            raise BehaviorError(prepared.source, 0, f"BehaviorTree.CPP: {exc}") from None
        owner = Owner(len(self.owners), kind, body, name, prepared.source, tree_obj)
        owner.polls = bool(prepared.uses - L.WAKING)
        owner.board = board  # (kept alive with its tree)
        self.owners.append(owner)
        self._person_of = np.append(self._person_of, body if kind == "person" else -1)
        self.wake(owner)
        return owner

    def add_person(self, person: int, tree: str | Path, at: str,
                   blackboard: Mapping[str, Any] | None = None) -> Owner:  # fmt: skip
        """Give person `person` (an id of `sim.people`) the tree in file `tree` (or XML text);
        `at`: the node it stands at (its first walk is routed from there). It stays on the
        floor between walks until its tree makes it `Leave`."""
        self.sim.people.crowd.rows(np.array([person]))
        owner = self._add("person", int(person), f"person {person}", tree, blackboard)
        owner.at = at
        self.sim.people.staying.add(int(person))
        return owner

    def add_robot(self, agent: Any, tree: str | Path,
                  blackboard: Mapping[str, Any] | None = None) -> Owner:  # fmt: skip
        """Give robot `agent` the tree in file `tree` (or XML text)."""
        owner = self._add("robot", agent, agent.name, tree, blackboard)
        owner.robot_row = len(self._robots)
        self._robots.append(owner)
        self._robot_handles = np.append(self._robot_handles, agent.handle)
        p = self.batteries.params
        self.batteries.soc = np.append(self.batteries.soc, p.initial)
        self.batteries.charging = np.append(self.batteries.charging, False)
        pose = agent.get_pose()
        self._last_xy = np.vstack((self._last_xy, [pose.x, pose.y]))
        return owner

    # -- ticking ---------------------------------------------------------------------------

    def wake(self, owner: Owner, when: float | None = None) -> None:
        """Tick `owner`'s tree after the step that ends at or after `when` (default: now)."""
        when = self.sim.sim_time if when is None else when
        if when not in owner.pending:
            owner.pending.add(when)
            heapq.heappush(self._queue, (when, owner.index))

    @classmethod
    def of(cls, sim: Any) -> Behaviors:
        """`sim`'s behaviour trees (`sim.behaviors`), made now if it has none."""
        return sim.behaviors if sim.behaviors is not None else cls(sim)

    def step(self) -> None:
        """After a step: the batteries, who arrived, then the trees that are due."""
        if self.sim.behaviors is not self:  # (the simulation was reset: these are gone)
            return
        now = self.sim.sim_time
        if self._robots:
            self._drain()
        if self.walking:  # (arrived, or held back near the place: `leaves.CROWDED_M`)
            walkers = np.fromiter(self.walking, np.int64, len(self.walking))
            crowd = self.sim.people.crowd
            rows = crowd.rows(self._person_of[walkers])
            for k in walkers[L.there(crowd, rows)].tolist():
                self.wake(self.owners[k])
        due: set[int] = set()
        while self._queue and self._queue[0][0] <= now + 1e-9:
            when, k = heapq.heappop(self._queue)
            if when in self.owners[k].pending:  # (not the rate's tick a sooner tick moved)
                self.owners[k].pending.discard(when)
                due.add(k)
        for k in sorted(due):
            owner = self.owners[k]
            if owner.status == L.RUNNING and owner.alive:
                self._tick(owner)

    def _tick(self, owner: Owner) -> None:
        self._current = owner
        try:
            answer = owner.tree.tick_exactly_once()
        finally:
            self._current = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        owner.ticks += 1
        if not owner.alive or answer != self.bt.NodeStatus.RUNNING:
            owner.status = L.SUCCESS if answer == self.bt.NodeStatus.SUCCESS else L.FAILURE
            self.sim.events.emit("behavior_finished", self.sim, {
                "name": owner.name, "kind": owner.kind, "status": owner.status,
                "time": self.sim.sim_time})  # fmt: skip
            return
        if owner.polls:  # (the rate's next tick, from this one)
            owner.pending.discard(owner.periodic)
            owner.periodic = self.sim.sim_time + self.period
            self.wake(owner, owner.periodic)

    def _drain(self) -> None:
        bodies = self.sim.world.bodies  # (the robots' positions from the table: no loop)
        handles = self._robot_handles
        xy = bodies["pos"][bodies.rows(handles), :2]
        driven = np.hypot(*(xy - self._last_xy).T)
        self._last_xy = xy
        self.batteries.update(self.sim.params.timestep, driven, driven > 1e-6)

    # -- what leaves ask -------------------------------------------------------------------

    def output(self, port: str, value: str) -> None:
        """The leaf being ticked writes `value` to its output `port`."""
        self._outputs[port] = value

    def note(self, owner: Owner, why: str) -> None:
        """A leaf failed for a reason the tree's author should see (kept in `notes`)."""
        self.notes.append(f"{owner.source}: {owner.name} at {self.sim.sim_time:.1f} s: {why}")

    def row(self, owner: Owner) -> int:
        """A person's row of the crowd."""
        return int(self.sim.people.crowd.rows(np.array([owner.body]))[0])

    def position(self, owner: Owner) -> np.ndarray:
        """(2,) where `owner` is."""
        if owner.kind == "person":
            return np.asarray(self.sim.people.positions[self.row(owner)])
        pose = owner.body.get_pose()
        return np.array([pose.x, pose.y])

    def _agents(self) -> list[Any]:
        from fleetsim.agents import Agent

        return [o for o in self.sim.world.objects.values() if isinstance(o, Agent)]

    def robot_named(self, name: str) -> Any:
        """The robot called `name`, or None."""
        return next((a for a in self._agents() if a.name == name), None)

    def object_named(self, name: str) -> Any:
        """The body called `name` (an object to pick), or None."""
        return next((o for o in self.sim.world.objects.values() if o.name == name), None)

    def floor(self, owner: Owner) -> str | None:
        """The level `owner` is on (a person's floor; a robot's: the one nearest its height)."""
        site = self.sim.site
        if site is None:
            return None
        if owner.kind == "person":
            people = self.sim.people
            level: str | None = people.levels[int(people.level_rows()[self.row(owner)])]
            return level
        return str(site.level_at(owner.body.get_pose().z))

    def people_near(self, owner: Owner, xy: np.ndarray, reach: float) -> bool:
        """Whether a person other than `owner`, on its floor, is within `reach` of `xy`."""
        if self.sim._people is None or not len(self.sim.people.crowd):
            return False
        people = self.sim.people
        crowd = people.crowd
        near = np.hypot(*(crowd.x - xy).T) <= reach
        if len(people.levels) > 1:
            near &= people.level_rows() == people.levels.index(self.floor(owner))
        if owner.kind == "person":
            near &= crowd.ids != owner.body
        return bool(near.any())

    def robots_near(self, owner: Owner, xy: np.ndarray, reach: float) -> bool:
        """Whether a robot other than `owner`, on its floor, is within `reach` of `xy`."""
        site, floor = self.sim.site, self.floor(owner)
        for agent in self._agents():
            if owner.kind == "robot" and agent is owner.body:
                continue
            pose = agent.get_pose()
            if site is not None and site.level_at(pose.z) != floor:
                continue
            if math.hypot(pose.x - xy[0], pose.y - xy[1]) <= reach:
                return True
        return False

    def bodies_near(self, owner: Owner, xy: np.ndarray, reach: float) -> bool:
        """Whether a person or robot other than `owner` is within `reach` of `xy`."""
        return self.people_near(owner, xy, reach) or self.robots_near(owner, xy, reach)

    def kpis(self) -> dict[str, Any]:
        """Trees running, succeeded and failed, ticks, and the last reasons leaves failed."""
        by = [o.status for o in self.owners]
        return {"trees": len(by), "trees_running": by.count(L.RUNNING),
                "trees_succeeded": by.count(L.SUCCESS), "trees_failed": by.count(L.FAILURE),
                "tree_ticks": sum(o.ticks for o in self.owners),
                "leaf_failures": self.notes[-5:]}  # fmt: skip
