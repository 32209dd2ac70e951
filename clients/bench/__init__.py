"""Benchmarks (``cardhall bench ...``): programs that measure and print figures, never tests.

``cardhall.clients.bench.engine``       the rules engines: hands/s against pokerkit, whole matches/s, bots' win rates.
``cardhall.clients.bench.pokerkit_ref`` pokerkit as the reference implementation of PHH (also used by the tests).
"""
