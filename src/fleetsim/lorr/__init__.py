"""The League of Robot Runners (LoRR): its start kit's problems, entries and rules, hosted by
fleetsim. This stage: the kit's execution delays (`DelayGenerator`), drawn with the kit's
random numbers so that the same seed gives the same delays."""

from fleetsim.lorr.delays import DelayConfig, DelayGenerator

__all__ = ["DelayConfig", "DelayGenerator"]
