"""The load generator behind ``cardhall loadtest`` (and the spectators of
``cardhall bench server``).

* :mod:`cardhall.clients.load.histogram`: latencies in logarithmic buckets (1 %), mergeable across processes;
* :mod:`cardhall.clients.load.probe`: the server seen from outside: Prometheus text, RSS, ports;
* :mod:`cardhall.clients.load.tracked`: a :class:`cardhall.clients.client.Client` that counts what it receives
  (events, latencies, errors by code, ``seq`` gaps and reorderings) into a shared :class:`Recorder`;
* :mod:`cardhall.clients.load.player`: a seat played at full speed or with a think time
  (:class:`cardhall.clients.bots.BotPlayer` with a pause and a stopwatch);
* :mod:`cardhall.clients.load.worker`: one load process: its share of the tables' players and spectators;
* :mod:`cardhall.clients.load.run`: the orchestration: tables, worker processes, the measuring window, the figures.
"""
