"""Where tables, their events and hand histories are kept.

=================  ==============================================================
``format``         the stored format: msgpack states and event records, versions, migrations
``base``           the ``Store`` interface, ``Checkpoint``, ``StoreUnavailable``
``memory``         ``MemoryStore``: the default, nothing outlives the process
``redis``          ``RedisStore``: ``cardhall serve --redis URL``
``committer``      ``GroupCommitter``: one ``commit`` per loop iteration for every table
=================  ==============================================================

``server/STORAGE.md`` documents the format and the Redis key layout.
"""
