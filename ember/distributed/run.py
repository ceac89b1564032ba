"""`python -m ember.distributed.run` / `emberrun`: torchrun's launcher on ember.

Usage is torchrun's: `emberrun --nproc-per-node=2 train.py --epochs 3`. Workers run the
script with `torch` resolving to ember (as `ember run` does). Single node:
`--standalone`. Several nodes: `--nnodes=MIN:MAX --rdzv-backend=c10d
--rdzv-endpoint=HOST:PORT --rdzv-id=JOB` on every node (the agent that can bind the
endpoint's port hosts the rendezvous store), or the static backend with `--nnodes=N
--node-rank=R --master-addr=HOST --master-port=PORT`. On a worker failure the whole worker
group restarts, up to `--max-restarts`; a node joining or leaving re-forms the group.
"""
import argparse
import os
import socket
import sys
import uuid
from datetime import timedelta

from ._store import PrefixStore, TCPStore
from ._errors import DistNetworkError
from .elastic.agent import LocalElasticAgent, WorkerSpec
from .elastic.rendezvous import RendezvousHandler, free_port

__all__ = ["main", "get_args_parser", "parse_args", "run", "config_from_args"]


def _flag(p, name, **kw):
    """torchrun accepts both spellings: --nproc-per-node and --nproc_per_node."""
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    p.add_argument(*names, **kw)


def get_args_parser():
    p = argparse.ArgumentParser(prog="emberrun", description="ember's torchrun: start and "
                                "supervise the workers of a distributed training job")
    _flag(p, "nnodes", default="1:1", help="N or MIN:MAX nodes")
    _flag(p, "nproc-per-node", default="1", help="workers per node (an int, or 'cpu'/'auto')")
    _flag(p, "rdzv-backend", default="static", help="static or c10d")
    _flag(p, "rdzv-endpoint", default="", help="HOST:PORT of the rendezvous store")
    _flag(p, "rdzv-id", default="none", help="job id shared by the nodes of one job")
    _flag(p, "rdzv-conf", default="", help="k=v,... (join_timeout, last_call_timeout, "
          "heartbeat_timeout)")
    p.add_argument("--standalone", action="store_true", help="one node, local rendezvous")
    _flag(p, "max-restarts", type=int, default=0)
    _flag(p, "monitor-interval", type=float, default=0.1)
    _flag(p, "start-method", default="spawn", choices=["spawn", "fork", "forkserver"])
    p.add_argument("--role", default="default")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    _flag(p, "no-python", action="store_true", help="run the script directly, not via python")
    _flag(p, "run-path", action="store_true", help="accepted; workers always run the file "
          "as __main__")
    _flag(p, "log-dir", default=None)
    p.add_argument("-r", "--redirects", default="0")
    p.add_argument("-t", "--tee", default="0")
    _flag(p, "local-ranks-filter", default="")
    _flag(p, "node-rank", type=int, default=0)
    _flag(p, "master-addr", default="127.0.0.1")
    _flag(p, "master-port", type=int, default=29500)
    _flag(p, "local-addr", default=None)
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nnodes(s):
    lo, _, hi = str(s).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if not 1 <= lo <= hi:
        raise ValueError(f"--nnodes={s}: need 1 <= MIN <= MAX")
    return lo, hi


def _per_rank(value, nproc, what):
    """'3' -> every local rank 3; '0:1,1:2' -> per local rank (torchrun's Std syntax)."""
    value = str(value)
    if ":" not in value:
        v = int(value)
        if not 0 <= v <= 3:
            raise ValueError(f"--{what}={value}: must be 0..3 (1 stdout, 2 stderr, 3 both)")
        return {i: v for i in range(nproc)}
    out = {}
    for part in value.split(","):
        r, _, v = part.partition(":")
        out[int(r)] = int(v)
    return out


def _conf(s):
    out = {}
    for part in filter(None, s.split(",")):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


def _nproc(s):
    if s in ("cpu", "auto"):
        return os.cpu_count() or 1
    n = int(s)
    if n < 1:
        raise ValueError(f"--nproc-per-node={s}: must be >= 1")
    return n


def config_from_args(a):
    nproc = _nproc(a.nproc_per_node)
    lo, hi = _nnodes(a.nnodes)
    if a.standalone:
        a.rdzv_backend, lo, hi = "c10d", 1, 1
        a.rdzv_endpoint = f"127.0.0.1:{free_port()}"
        a.rdzv_id = str(uuid.uuid4())
    if a.rdzv_backend == "static":
        if lo != hi:
            raise ValueError("--rdzv-backend=static needs a fixed --nnodes (not MIN:MAX)")
        host, port = a.master_addr, a.master_port
    elif a.rdzv_backend == "c10d":
        if not a.rdzv_endpoint:
            raise ValueError("--rdzv-backend=c10d needs --rdzv-endpoint=HOST:PORT")
        host, _, port = a.rdzv_endpoint.rpartition(":")
        host, port = host or "127.0.0.1", int(port or 29400)
    else:
        raise ValueError(f"--rdzv-backend={a.rdzv_backend}: ember supports 'static' and "
                         f"'c10d'")
    if a.no_python:
        entry = [a.training_script, *a.training_script_args]
    else:
        entry = [sys.executable, "-u", "-m", "ember.distributed.elastic._bootstrap"] + \
            (["-m"] if a.module else []) + [a.training_script, *a.training_script_args]
    spec = WorkerSpec(entrypoint=entry, nproc=nproc, role=a.role, max_restarts=a.max_restarts,
                      monitor_interval=a.monitor_interval, run_id=a.rdzv_id,
                      log_dir=a.log_dir, redirects=_per_rank(a.redirects, nproc, "redirects"),
                      tee=_per_rank(a.tee, nproc, "tee"), name=a.training_script)
    return spec, (lo, hi), (host, port), a


def _is_local(host):
    if host in ("localhost", "127.0.0.1", "0.0.0.0", "", socket.gethostname(),
                socket.getfqdn()):
        return True
    try:
        return socket.gethostbyname(host).startswith("127.")
    except OSError:
        return False


def _store(host, port, a, timeout):
    """The rendezvous store: host it when the endpoint is ours and free, else connect."""
    hosting = a.node_rank == 0 if a.rdzv_backend == "static" else _is_local(host)
    if hosting:
        try:
            return TCPStore(host, port, is_master=True, timeout=timeout,
                            wait_for_workers=False)
        except DistNetworkError:
            if a.rdzv_backend == "static":
                raise
    return TCPStore(host, port, is_master=False, timeout=timeout)


def run(args):
    spec, (lo, hi), (host, port), a = config_from_args(args)
    conf = _conf(a.rdzv_conf)
    join_timeout = float(conf.get("join_timeout", 600))
    store = PrefixStore(f"emberrun/{spec.run_id}",
                        _store(host, port, a, timedelta(seconds=join_timeout)))
    rdzv = RendezvousHandler(
        store, lo, hi, spec.nproc,
        node_rank=a.node_rank if a.rdzv_backend == "static" else None,
        join_timeout=join_timeout,
        last_call_timeout=float(conf.get("last_call_timeout", 1.0)),
        heartbeat_timeout=float(conf.get("heartbeat_timeout", 10.0)),
        master_addr=a.local_addr or ("127.0.0.1" if _is_local(host) else socket.getfqdn()))
    agent = LocalElasticAgent(spec, rdzv)
    result = agent.run()
    if result.state != "SUCCEEDED":
        if result.failures:
            raise agent.child_failed_error(result)
        raise RuntimeError(f"{spec.name}: the run was shut down by another node")
    return result


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from .elastic.multiprocessing.errors import ChildFailedError
    try:
        run(args)
    except ChildFailedError as e:
        print(f"ember.distributed.elastic.multiprocessing.errors.ChildFailedError: {e}",
              file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
