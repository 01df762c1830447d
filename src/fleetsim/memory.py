"""What a request will cost in memory, said before it is built: a count that would need more
memory than the machine has is refused with the estimate, instead of ending in a bare
MemoryError (or the machine swapping) half-way."""

from __future__ import annotations

import os

from fleetsim import environment
from fleetsim.errors import ConfigError

BYTES_PER_BODY = 2_600  # measured: 100,000 cube robots in 237 MB with their tables and shapes
USABLE = 0.8  # of the machine's memory


def machine_bytes() -> int:
    """The machine's physical memory in bytes (0 when it cannot be read)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


def check_fits(count: int, what: str, bytes_each: int = BYTES_PER_BODY) -> None:
    """Refuse `count` items of `bytes_each` when they would not fit in this machine's memory."""
    each = f"100,000 need about {100_000 * bytes_each / 1e9:.2f} GB"
    check_bytes(count * bytes_each, f"{count:,} {what}", f"use fewer ({each})")


def check_bytes(need: float, what: str, fix: str) -> None:
    """Refuse `what`, which would need `need` bytes, when that is more than this machine has
    to give: the error says the estimate, the machine's memory and `fix`."""
    have = machine_bytes()
    if have and need > USABLE * have:
        raise ConfigError(
            f"{what} would need about {need / 1e9:,.1f} GB of memory; this machine has "
            f"{have / 1e9:.1f} GB: {fix}"
        )


# measured: a 3,000 x 3,000 free grid map loads with a peak of 150 bytes a free cell (held
# after: 95); traffic control's tables for it (conflicts, owners) stay under that peak
BYTES_PER_GRID_CELL = 160
SITE_LIMIT_ENV = environment.MAX_SITE_GB.name  # a larger graph is refused unless it says more


def check_site_fits(nodes: int, what: str, bytes_each: int = BYTES_PER_GRID_CELL) -> None:
    """Refuse a site graph of `nodes` whose estimate is over the site limit (3 GB, or
    $FLEETSIM_MAX_SITE_GB) or over what this machine has, saying both."""
    limit_gb = environment.max_site_gb()
    need = nodes * bytes_each
    if need > limit_gb * 1e9:
        raise ConfigError(
            f"{what}: {nodes:,} nodes would need about {need / 1e9:,.1f} GB of memory, over the "
            f"limit of {limit_gb:g} GB (set {SITE_LIMIT_ENV} to allow more)"
        )
    check_fits(nodes, f"site nodes ({what})", bytes_each)
