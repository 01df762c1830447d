"""Open-RMF: the fleet-manager REST API that RMF's demo fleet adapter speaks
(`/open-rmf/rmf_demos_fm/...`), served for a simulation's robots.

- `fleet` (`RmfFleet`): the simulation side; commands queued by the HTTP side are applied at
  the start of a step, and a status snapshot is built after it for the HTTP side to read;
- `server` (`make_app`, `RmfServer`): FastAPI routes and uvicorn in a thread of its own.
"""
