"""An outside fleet manager for `fleetsim fuzz --manager`: a VDA 5050 master control that sends
every vehicle it hears of to the depot at (5, 0), at once (its planted bug: it never asks
whether the depot is free). Run by fuzz as
    python to_the_depot.py --broker {broker}
"""

from __future__ import annotations

import argparse
import json
import time

import paho.mqtt.client as mqtt

PREFIX = "uagv/v2/fleetsim"


def order(serial: str, x: float, y: float) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    node = (
        '{{"nodeId":"{0}","sequenceId":{1},"released":true,"actions":[],'
        '"nodePosition":{{"x":{2},"y":{3},"mapId":"site"}}}}'
    )
    return (
        f'{{"headerId":1,"timestamp":"{stamp}","version":"2.0.0","manufacturer":"fleetsim",'
        f'"serialNumber":"{serial}","orderId":"depot","orderUpdateId":0,"nodes":['
        f'{node.format("here", 0, x, y)},{node.format("depot", 2, 5.0, 0.0)}],"edges":['
        '{"edgeId":"go","sequenceId":1,"released":true,"startNodeId":"here",'
        '"endNodeId":"depot","actions":[]}]}'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker", required=True, help="mqtt://HOST:PORT")
    args = parser.parse_args()
    host, port = args.broker.split("://")[-1].rsplit(":", 1)
    sent: set[str] = set()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="to_the_depot")

    def on_state(payload: bytes) -> None:
        state = json.loads(payload)
        serial = state["serialNumber"]
        if serial not in sent:  # the first state: send it to the depot
            sent.add(serial)
            p = state["agvPosition"]
            client.publish(f"{PREFIX}/{serial}/order", order(serial, p["x"], p["y"]))

    client.on_message = lambda _c, _u, m: on_state(m.payload)
    client.connect(host, int(port))
    client.subscribe(f"{PREFIX}/+/state")
    client.loop_forever()


if __name__ == "__main__":
    main()
