"""The launcher's rendezvous: agents (one per node) agree on who takes part in a round.

Note: the protocol lives in a TCPStore (the `c10d` backend's role in torchrun). Keys are
scoped per run id and per round:
  round                   the current round number (a decimal counter)
  r<N>/joined             how many agents joined round N; an agent's arrival index is its
                          node rank (or --node-rank with the static backend)
  r<N>/node<i>            JSON {host, nproc} of node i
  r<N>/closed             the number of participants, written by node 0 once min_nodes have
                          joined and either max_nodes joined or the last-call time passed
  r<N>/waiting            agents that arrived after round N closed (they wait for N+1)
  r<N>/master             "addr:port" the workers of round N use as MASTER_ADDR/MASTER_PORT
  r<N>/hb<i>              node i's heartbeat (time of its last monitor pass)
  shutdown                set when a node gave up (out of restarts): every agent stops
A round ends when any agent moves `round` to N+1 with compare_set: after a worker failure,
when a node is waiting to join, or when a peer's heartbeat goes stale. Every agent watches
`round` and restarts its workers in the new round.
"""
import json
import socket
import time
from dataclasses import dataclass

__all__ = ["RendezvousInfo", "RendezvousHandler", "RendezvousClosedError",
           "RendezvousTimeoutError"]


class RendezvousClosedError(RuntimeError):
    """The run was shut down by another node (torch.distributed.elastic's name)."""


class RendezvousTimeoutError(RuntimeError):
    """Not enough nodes joined within the join timeout."""


@dataclass
class RendezvousInfo:
    round: int
    node_rank: int
    num_nodes: int
    nodes: list                # [{host, nproc}] in node-rank order
    master_addr: str
    master_port: int

    @property
    def rank_offset(self):
        return sum(n["nproc"] for n in self.nodes[:self.node_rank])

    @property
    def world_size(self):
        return sum(n["nproc"] for n in self.nodes)


def free_port(host=""):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class RendezvousHandler:
    """Joins rounds of one run (`run_id`) on `store` (a PrefixStore scoped to the run)."""

    def __init__(self, store, min_nodes, max_nodes, nproc, *, node_rank=None,
                 join_timeout=900.0, last_call_timeout=1.0, heartbeat_timeout=30.0,
                 master_addr="127.0.0.1"):
        if not 1 <= min_nodes <= max_nodes:
            raise ValueError(f"rendezvous: need 1 <= min_nodes ({min_nodes}) <= max_nodes "
                             f"({max_nodes})")
        self.store = store
        self.min_nodes, self.max_nodes = min_nodes, max_nodes
        self.nproc = nproc
        self.static_rank = node_rank           # static backend: the rank is given
        self.join_timeout = join_timeout
        self.last_call_timeout = last_call_timeout
        self.heartbeat_timeout = heartbeat_timeout
        self.master_addr = master_addr
        self.info = None

    # -- reading the shared state -------------------------------------------------
    def _counter(self, key):
        return int(self.store.add(key, 0))

    def current_round(self):
        return self._counter("round")

    def _has(self, key):
        return self.store.check([key])

    def is_shutdown(self):
        return self._has("shutdown")

    def num_nodes_waiting(self):
        return self._counter(f"r{self.info.round}/waiting") if self.info else 0

    # -- joining --------------------------------------------------------------------
    def next_rendezvous(self):
        """Block until this node takes part in a closed round; return its RendezvousInfo."""
        deadline = time.monotonic() + self.join_timeout
        waiting_in = None
        while True:
            if self.is_shutdown():
                raise RendezvousClosedError("rendezvous: the run was shut down by another node")
            if time.monotonic() > deadline:
                raise RendezvousTimeoutError(
                    f"rendezvous: fewer than min_nodes={self.min_nodes} nodes joined within "
                    f"{self.join_timeout:.0f} s")
            rnd = self.current_round()
            if self._has(f"r{rnd}/closed"):
                if waiting_in != rnd:             # announce ourselves once per closed round
                    self.store.add(f"r{rnd}/waiting", 1)
                    waiting_in = rnd
                time.sleep(0.05)
                continue
            info = self._join(rnd, deadline)
            if info is not None:
                self.info = info
                self.heartbeat()
                return info

    def _join(self, rnd, deadline):
        arrival = int(self.store.add(f"r{rnd}/joined", 1)) - 1
        rank = arrival if self.static_rank is None else self.static_rank
        me = {"host": socket.gethostname(), "nproc": self.nproc}
        self.store.set(f"r{rnd}/node{rank}", json.dumps(me))
        if rank == 0:
            self._close(rnd, deadline)
        while not self._has(f"r{rnd}/closed"):
            if self.current_round() != rnd:        # the round moved on before it closed
                return None
            if time.monotonic() > deadline:
                raise RendezvousTimeoutError(
                    f"rendezvous: round {rnd} did not close within {self.join_timeout:.0f} s "
                    f"(min_nodes={self.min_nodes})")
            time.sleep(0.02)
        n = int(self.store.get(f"r{rnd}/closed"))
        if rank >= n:                              # came too late for this round
            return None
        nodes = [json.loads(self.store.get(f"r{rnd}/node{i}")) for i in range(n)]
        addr, port = self.store.get(f"r{rnd}/master").decode().rsplit(":", 1)
        return RendezvousInfo(rnd, rank, n, nodes, addr, int(port))

    def _close(self, rnd, deadline):
        """Node 0: wait for min_nodes, give late nodes a last call, then close the round."""
        quorum_at = None
        while True:
            joined = self._counter(f"r{rnd}/joined")
            if self.static_rank is not None:
                joined = sum(self._has(f"r{rnd}/node{i}") for i in range(self.max_nodes))
            now = time.monotonic()
            if joined >= self.min_nodes and quorum_at is None:
                quorum_at = now
            if joined >= self.max_nodes or (
                    quorum_at is not None and now - quorum_at >= self.last_call_timeout):
                n = min(joined, self.max_nodes)
                for i in range(n):                 # every participant has written its entry
                    self.store.wait([f"r{rnd}/node{i}"])
                self.store.set(f"r{rnd}/master", f"{self.master_addr}:{free_port()}")
                self.store.set(f"r{rnd}/closed", str(n))
                return
            if now > deadline:
                return                             # the joiners raise the timeout error
            time.sleep(0.02)

    # -- while the workers run ---------------------------------------------------------
    def heartbeat(self):
        self.store.set(f"r{self.info.round}/hb{self.info.node_rank}", repr(time.time()))

    def stale_peers(self):
        """Node ranks whose agent stopped beating (a node that left or died)."""
        now, rnd = time.time(), self.info.round
        stale = []
        for i in range(self.info.num_nodes):
            if i == self.info.node_rank or self._has(f"r{rnd}/done{i}"):
                continue
            if now - float(self.store.get(f"r{rnd}/hb{i}")) > self.heartbeat_timeout:
                stale.append(i)
        return stale

    def round_moved(self):
        return self.current_round() != self.info.round

    def next_round(self):
        """End the current round for everyone (a restart or a membership change)."""
        rnd = self.info.round
        self.store.compare_set("round", str(rnd), str(rnd + 1))

    def mark_done(self):
        self.store.set(f"r{self.info.round}/done{self.info.node_rank}", "1")

    def shutdown(self):
        self.store.set("shutdown", "1")
