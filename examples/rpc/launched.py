"""RPC under the launcher (env:// from RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT):

    emberrun --standalone --nproc-per-node 2 examples/rpc/launched.py

Worker 0 sums tensors that live on every worker, through RRefs.
"""
import os

import ember as torch
import ember.distributed.rpc as rpc


def make(rank):
    return torch.full((3,), float(rank + 1))


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    rpc.init_rpc(f"worker{rank}")          # rank and world size come from the environment
    if rank == 0:
        rrefs = [rpc.remote(f"worker{k}", make, args=(k,)) for k in range(world)]
        total = sum(r.to_here() for r in rrefs)
        print("sum over workers:", total.tolist())
    rpc.shutdown()


if __name__ == "__main__":
    main()
