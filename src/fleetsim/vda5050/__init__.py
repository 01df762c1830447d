"""VDA 5050: simulated robots as vehicles a master control drives over MQTT. So far: the
messages (`messages`), the rules an order keeps (`order_rules`), order acceptance and
stitching (`order_book`), one robot as a vehicle that drives its orders and reports its state
(`vehicle`), topics (`topics`), the embedded broker (`broker`) and the MQTT sessions (`link`).
Still to come: the fleet side joining them to a running simulation, instant and node actions,
the factsheet, and the `fleetsim vda5050` command."""

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
from fleetsim.vda5050.order_book import OrderBook, Verdict
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
    "OrderBook",
    "State",
    "Verdict",
    "Visualization",
    "order_problems",
    "timestamp",
]
