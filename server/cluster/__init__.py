"""A cluster of cardhall nodes on one Redis: leases with fencing, the node
registry, routing between nodes, failover and handover (``deploy/README.md``,
"On several machines"; ``server/STORAGE.md``)."""
