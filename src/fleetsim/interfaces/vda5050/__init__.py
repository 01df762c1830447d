"""VDA 5050: simulated robots as vehicles a master control drives over MQTT.

- `messages`, `factsheet`: the standard's messages as pydantic models (parsing and contract);
  `encode`: the fast JSON of the frequent ones, checked against the models;
- `order_rules`, `order_book`: the rules an order keeps, acceptance and stitching;
- `actions`, `effects`: node, edge and instant actions through their states, and what they do;
- `vehicle`: one robot as a vehicle; `fleet` (`VdaFleet`): a simulation's robots on a broker;
- `topics`, `link`, `network`: topic names, MQTT sessions, the one network thread;
- `broker`: the embedded broker (amqtt) and Mosquitto as a child process.
"""

from fleetsim.interfaces.vda5050.messages import (
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
from fleetsim.interfaces.vda5050.order_book import OrderBook, Verdict
from fleetsim.interfaces.vda5050.order_rules import order_problems

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
