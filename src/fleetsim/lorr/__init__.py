"""The League of Robot Runners (LoRR): its start kit's problems, entries and rules, hosted by
fleetsim. Kit mode (`fleetsim.lorr.kit.KitRun`, `fleetsim lorr run`) runs a kit problem
(`load_problem`) with entries written for the kit, unmodified (`fleetsim.lorr.mapf`: the
`MAPF` module they import, `load_entry`), on the kit's rules: its competition loop, its action
model (`fleetsim.lorr.action_model`), its task manager (`fleetsim.lorr.tasks`) and its delays
(`fleetsim.faults.delays`, drawn with the kit's random numbers), and writes the kit's output
JSON (`fleetsim.lorr.output`). `fleetsim.lorr.entries` holds fleetsim's default entries."""

from fleetsim.lorr.problem import Problem, load_problem

__all__ = ["Problem", "load_problem"]
