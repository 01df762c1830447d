"""vda5050-sdk's master control as the tests drive it: `Master` (what it saw), `run` (a test
body against a served fleet, every message checked against the master's schemas), `builder`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

vda = pytest.importorskip("vda5050")


class Master:
    """vda5050-sdk's master control, with what it saw."""

    def __init__(self, broker_url: str, **config: Any) -> None:
        config = {"broker_url": broker_url, "validate_messages": True, **config}
        self.client = vda.MasterClient(vda.MasterConfig(**config))
        self.states: dict[str, list[Any]] = {}
        self.errors: list[Any] = []
        self.invalid: list[Any] = []
        self.factsheets: dict[str, Any] = {}
        self.client.on_state(lambda s, key: self.states.setdefault(key.serial_number, []).append(s))
        self.client.on_vehicle_error(lambda e, _key: self.errors.append(e))
        self.client.on_error(self.invalid.append)
        self.client.on_factsheet(lambda f, key: self.factsheets.__setitem__(key.serial_number, f))

    def last(self, serial: str) -> Any:
        return self.states[serial][-1] if self.states.get(serial) else None

    async def when(self, serial: str, holds: Callable[[Any], Any], seconds: float = 60.0) -> Any:
        """The first state of `serial` (from now on) for which `holds(state)`."""

        def check() -> Any:
            state = self.last(serial)
            return state if state is not None and holds(state) else None

        return await self.until(check, seconds)

    async def until(self, check: Callable[[], Any], seconds: float = 30.0) -> Any:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            await asyncio.sleep(0.05)
        raise AssertionError(
            f"not reached; invalid messages {self.invalid[-3:]}, vehicle errors {self.errors[-3:]}"
        )


def run(
    master_test: Callable[[Master], Awaitable[None]],
    broker: Any,
    serials: tuple[str, ...] = ("diff_0", "omni_0"),
) -> None:
    async def main() -> None:
        master = Master(broker.url)
        await master.client.connect()
        try:
            for serial in serials:
                await master.client.request_factsheet(f"fleetsim/{serial}")
            await master.until(lambda: set(serials) <= set(master.factsheets))
            await master_test(master)
            assert master.invalid == []  # every message passed the master's schemas
        finally:
            await master.client.disconnect()

    asyncio.run(main())


def builder(order_id: str, serial: str, **more: Any) -> Any:
    return vda.OrderBuilder(
        order_id=order_id, manufacturer="fleetsim", serial_number=serial, **more
    )
