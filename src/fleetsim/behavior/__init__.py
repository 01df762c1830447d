"""Behaviour trees for people and robots: BehaviorTree.CPP v4 XML (Nav2's and Groot2's format)
run by BehaviorTree.CPP itself (behaviortreepy, the `[bt]` extra), with fleetsim's actions and
conditions as leaves (see docs/guides/behavior.md)."""

from fleetsim.behavior.leaves import LEAVES
from fleetsim.behavior.runner import Behaviors, Owner
from fleetsim.behavior.trees import BehaviorError, LeafSpec, Port, read

__all__ = ["LEAVES", "BehaviorError", "Behaviors", "LeafSpec", "Owner", "Port", "read"]
