"""A tiny VDA 5050 master control (paho-mqtt): each vehicle out along its row and back.

Subscribes to every vehicle's state; when one has arrived and its actions have finished, it
sends the next order: three nodes along y = 3 x (the vehicle's number), a pick at the first and
a drop at the last, alternately out and back.
"""

from __future__ import annotations

import json

import paho.mqtt.client as mqtt


class MasterControl:
    """Out along y = row and back, over and over; counts the trips each vehicle finished."""

    def __init__(self, host: str, port: int) -> None:
        self.trips: dict[str, int] = {}
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="master")
        self.client.on_message = lambda _c, _u, m: self.on_state(json.loads(m.payload))
        self.client.connect(host, port)
        self.client.subscribe("uagv/v2/fleetsim/+/state")
        self.client.loop_start()

    def on_state(self, s: dict) -> None:
        busy = [a for a in s["actionStates"] if a["actionStatus"] not in ("FINISHED", "FAILED")]
        if s["nodeStates"] or s["driving"] or busy:  # still on its way, or working
            return
        serial, n = s["serialNumber"], self.trips.get(s["serialNumber"], -1) + 1
        self.trips[serial] = n
        xs = [0.0, 4.0, 8.0] if n % 2 == 0 else [8.0, 4.0, 0.0]
        y = 3.0 * int(serial.split("_")[1])
        ids = [f"p{x:.0f}_{y:.0f}" for x in xs]
        work = {0: "pick", len(xs) - 1: "drop"}  # a load out and back
        acts = {
            k: [dict(actionType=w, actionId=f"{serial}-{n}-{w}", blockingType="HARD")]
            for k, w in work.items()
        }
        nodes = [
            dict(
                nodeId=ids[k],
                sequenceId=2 * k,
                released=True,
                actions=acts.get(k, []),
                nodePosition=dict(x=x, y=y, mapId="site"),
            )
            for k, x in enumerate(xs)
        ]
        edges = [
            dict(
                edgeId=f"e{k}",
                sequenceId=2 * k + 1,
                released=True,
                actions=[],
                startNodeId=ids[k],
                endNodeId=ids[k + 1],
            )
            for k in range(len(xs) - 1)
        ]
        order = dict(
            headerId=n,
            timestamp=s["timestamp"],
            version="2.0.0",
            manufacturer="fleetsim",
            serialNumber=serial,
            orderId=f"{serial}-{n}",
            orderUpdateId=0,
            nodes=nodes,
            edges=edges,
        )
        self.client.publish(f"uagv/v2/fleetsim/{serial}/order", json.dumps(order))
