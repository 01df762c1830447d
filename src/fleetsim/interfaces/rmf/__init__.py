"""Open-RMF: the fleet-manager REST API that RMF's demo fleet adapter speaks
(`/open-rmf/rmf_demos_fm/...`), served for a simulation's robots.

- `fleet` (`RmfFleet`): the simulation side; commands queued by the HTTP side are applied at
  the start of a step, and a status board is put up after it for the HTTP side to read;
- `status` (`StatusBoard`): one step's status, each robot's answer encoded when first asked;
- `server` (`make_app`, `RmfServer`): FastAPI routes and uvicorn in a thread of its own;
- `fast_http`: status polls answered by a protocol in front of uvicorn's;
- `nav_graph`, `fleet_config`: a site as RMF's navigation graph and a starter adapter config.
"""
