"""VDA 5050: simulated robots as vehicles a master control drives over MQTT. So far: the
messages (`messages`) and the rules an order keeps (`order_rules`)."""

from fleetsim.vda5050.messages import (
    Action,
    ActionState,
    ActionStatus,
    BlockingType,
    Connection,
    ConnectionState,
    Edge,
    Error,
    Header,
    InstantActions,
    Node,
    NodePosition,
    Order,
    State,
    Visualization,
    timestamp,
)
from fleetsim.vda5050.order_rules import order_problems

__all__ = [
    "Action",
    "ActionState",
    "ActionStatus",
    "BlockingType",
    "Connection",
    "ConnectionState",
    "Edge",
    "Error",
    "Header",
    "InstantActions",
    "Node",
    "NodePosition",
    "Order",
    "State",
    "Visualization",
    "order_problems",
    "timestamp",
]
