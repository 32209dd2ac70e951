"""The live service: Starlette app, table actors, sessions, fan-out, checkpoints, bots, clocks."""
