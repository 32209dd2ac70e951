"""cardhall's rules engines: pure, deterministic, clock-free.

Every game implements :class:`cardhall.engine.base.Engine`. Nothing in this package does
I/O, reads a clock or touches asyncio; randomness comes in through a
:class:`cardhall.engine.rng.RandomSource` (RULES G-2).
"""
