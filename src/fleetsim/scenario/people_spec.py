"""A scenario's `people:` section: groups of pedestrians who walk the site's graph between
places, there at the start and/or arriving at a rate; the builder applies it with
`PeoplePlugin` (see docs/guides/people.md)."""

from __future__ import annotations

from pydantic import Field

from fleetsim.scenario.spec_base import NonNegative, Positive, Spec


class PeopleGroupSpec(Spec):
    """People who come from some places and walk to others, leaving at the last."""

    name: str = "people"
    """What they are (pickers, visitors): the group's name in the results."""
    count: int = Field(0, ge=0)
    """How many come at `start` all at once, each at one of `from` (a person's width apart:
    no more than those places hold, an error says how many)."""
    rate_per_hour: NonNegative = 0.0
    """How many more arrive an hour from `start` until `stop`, at random times (a Poisson
    process), at one of `from`."""
    start: NonNegative = 0.0
    """Simulated seconds when the group comes (a shift starts): `count` at once, then the
    arrivals."""
    stop: NonNegative | None = None
    """Simulated seconds when arrivals end (default: never)."""
    from_: list[str] = Field(alias="from", min_length=1)
    """Nodes of the site's graph where they appear (one at random each)."""
    to: list[str] = Field(default_factory=list)
    """Nodes they walk to (one at random each, another for each further trip); not with a
    `behavior` tree, which says where they go."""
    trips: int = Field(1, ge=1)
    """How many places of `to` each visits, one after another, before leaving."""
    speed: Positive | None = None
    """Free walking speed, m/s; default: drawn for each from Weidmann's distribution (mean 1.34
    m/s, standard deviation 0.26 m/s)."""
    radius: Positive = 0.2
    """Body radius, m (a disc: 0.4 m across the shoulders by default)."""
    behavior: str | None = None
    """A behaviour tree each of them runs (a BehaviorTree.CPP v4 XML file, relative to this
    file, or a bundled tree by name: picker_shift.xml): their work (walk to a station, pick a
    while, carry to packing, a break, leave), in place of `to` and `trips`. They stay on the
    floor until the tree makes them `Leave`."""
    blackboard: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Entries of each one's blackboard at the start (the tree reads them as `{key}`)."""


class PeopleSpec(Spec):
    """Pedestrians on the site's floor: groups, and the crowd model's time gap."""

    groups: list[PeopleGroupSpec] = Field(default_factory=list)
    """Groups of people (see each group's keys)."""
    level: str | None = None
    """The floor they all walk on (a building's level name): their places must be on it.
    Default: each group walks the floor its places are on (one floor a group)."""
    time_gap: Positive = 0.5
    """The crowd model's time gap, s: the headway people keep (see the people guide)."""
