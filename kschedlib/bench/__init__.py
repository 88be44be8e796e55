"""Benchmarks: ``python -m kschedlib.bench SCENARIO.json`` and ``--snapshot``."""
