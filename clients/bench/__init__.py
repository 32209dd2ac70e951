"""Benchmarks (``cardhall bench ...``): programs that measure and print figures, never tests.

``clients.bench.engine``       the rules engines: hands/s against pokerkit, whole matches/s, bots' win rates.
``clients.bench.pokerkit_ref`` pokerkit as the reference implementation of PHH (also used by the tests).
"""
