"""Benchmarks: the suite behind `fleetsim bench` (worker.py runs one case per process)."""
