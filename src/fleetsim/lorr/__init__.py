"""The League of Robot Runners (LoRR): its start kit's problems, entries and rules, hosted by
fleetsim. So far: the kit's problems read as the kit reads them (`load_problem`), its
execution delays (`DelayGenerator`), drawn with the kit's random numbers so that the same seed
gives the same delays, the `MAPF` module entries import (`fleetsim.lorr.mapf`: `hosting`,
`load_entry`), so that entries written for the kit load and run unmodified, and the kit's
action model (`fleetsim.lorr.action_model`: one tick of every robot's request, as the kit
decides it)."""

from fleetsim.lorr.delays import DelayConfig, DelayGenerator
from fleetsim.lorr.problem import Problem, load_problem

__all__ = ["DelayConfig", "DelayGenerator", "Problem", "load_problem"]
