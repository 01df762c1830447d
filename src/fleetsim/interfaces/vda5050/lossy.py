"""`LossyLink`: the vehicles' MQTT link with network faults (`fleetsim.faults.network`):
messages dropped, delayed, duplicated or reordered, each way, as a `MessageFate` decides. The
fleet publishes and takes messages through it as through the link itself; delayed and held
messages go out (or are taken) when their time comes, checked at every step."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from fleetsim.faults.network import MessageFate
from fleetsim.interfaces.vda5050.link import Inbound, MqttLink

OnFault = Callable[[str, str, str, bool], None]  # (outcome, serial, topic, inbound)


class LossyLink:
    """`link` with the network faults `fate` draws; `clock()` is simulated time; `on_fault`
    hears each message hit."""

    def __init__(
        self,
        link: MqttLink,
        fate: MessageFate,
        clock: Callable[[], float],
        on_fault: OnFault | None = None,
    ) -> None:
        self.link, self.fate, self.clock, self.on_fault = link, fate, clock, on_fault
        self._seq = itertools.count()
        self._later_out: list[tuple[float, int, str, str, str]] = []
        self._later_in: list[tuple[float, int, Inbound]] = []
        self._held_out: dict[tuple[str, str], list[str]] = {}
        self._held_in: dict[tuple[str, str], list[Inbound]] = {}

    def publish(self, serial: str, topic: str, payload: str) -> None:
        """Publish `payload`, or drop, delay, duplicate or hold it back as its fate says."""
        now = self.clock()
        outcome, times = self.fate.of(serial, topic, now, inbound=False)
        self._heard(outcome, serial, topic, False)
        if outcome == "reorder":
            self._held_out.setdefault((serial, topic), []).append(payload)
            return
        for at in times:
            if at <= now:
                self.link.publish(serial, topic, payload)
            else:
                heapq.heappush(self._later_out, (at, next(self._seq), serial, topic, payload))
        for held in self._held_out.pop((serial, topic), []):  # (after this one: reordered)
            self.link.publish(serial, topic, held)

    def flush(self) -> None:
        """Publish the delayed messages whose time has come."""
        now = self.clock()
        while self._later_out and self._later_out[0][0] <= now:
            _, _, serial, topic, payload = heapq.heappop(self._later_out)
            self.link.publish(serial, topic, payload)

    def take(self) -> list[Inbound]:
        """The messages received that arrive now: new ones as their fate says, and delayed
        ones whose time has come, oldest first."""
        now = self.clock()
        out: list[Inbound] = []
        while self._later_in and self._later_in[0][0] <= now:
            out.append(heapq.heappop(self._later_in)[2])
        for message in self.link.take():
            outcome, times = self.fate.of(message.serial, message.topic, now, inbound=True)
            self._heard(outcome, message.serial, message.topic, True)
            key = (message.serial, message.topic)
            if outcome == "reorder":
                self._held_in.setdefault(key, []).append(message)
                continue
            for at in times:
                if at <= now:
                    out.append(message)
                else:
                    heapq.heappush(self._later_in, (at, next(self._seq), message))
            out.extend(self._held_in.pop(key, []))
        return out

    def _heard(self, outcome: str, serial: str, topic: str, inbound: bool) -> None:
        if outcome != "ok" and self.on_fault is not None:
            self.on_fault(outcome, serial, topic, inbound)
