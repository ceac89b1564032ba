"""torch.distributed.elastic: the launcher's agent, rendezvous and error recording.

Note: `python -m ember.distributed.run` (console script `emberrun`, torchrun's flags) starts
one agent per node. Agents meet in a rendezvous on a TCPStore, agree on the node ranks, start
their workers with torchrun's environment variables, watch them, and restart the whole
worker group when a worker fails (up to --max-restarts) or when a node joins or leaves.
"""
