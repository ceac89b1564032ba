"""Process groups and the collective functions (torch.distributed.distributed_c10d).

Note: functions take global ranks (`src`, `dst`) or group ranks (`group_src`, ...) as
PyTorch does, check their arguments the way PyTorch does, and hand the work to the
group's backend ("gloo": TCP, `_gloo`; "mpi": MPI, `_mpi`). Sync calls return None;
`async_op=True` returns the backend's Work.
"""
import warnings
from datetime import timedelta

from .._tensor import Tensor
from ._reduce_op import ReduceOp
from ._store import PrefixStore
from .rendezvous import rendezvous

__all__ = [
    "Backend", "GroupMember", "group", "ProcessGroup", "init_process_group",
    "destroy_process_group", "new_group", "get_rank", "get_world_size", "is_initialized",
    "get_backend", "is_gloo_available", "is_mpi_available", "is_nccl_available",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "all_reduce",
    "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather", "scatter",
    "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier",
    "monitored_barrier", "send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
    "default_pg_timeout",
]

default_pg_timeout = timedelta(minutes=30)


class Backend(str):
    """Backend names (torch.distributed.Backend): `Backend("GLOO") == "gloo"`."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = name.lower()
        if value not in cls.backend_list:
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember


class ProcessGroup:
    """A group of ranks with its backend (what `new_group` / `group.WORLD` return)."""

    def __init__(self, impl, ranks, backend, name, store):
        self._impl, self._ranks, self._backend = impl, list(ranks), backend
        self.group_name, self._store = name, store
        self.bound_device_id = None

    def rank(self):
        return self._impl.rank()

    def size(self):
        return self._impl.size()

    def name(self):
        return self._backend

    def _get_backend_name(self):
        return self._backend

    def __repr__(self):
        return f"<ProcessGroup {self.group_name} backend={self._backend} ranks={self._ranks}>"


class _World:
    default_pg = None
    groups = []
    count = 0
    store = None
    own_store = False


def is_available():
    return True


def is_gloo_available():
    return True


def is_mpi_available():
    from . import _mpi
    return _mpi.available()


def is_nccl_available():
    return False


def is_initialized():
    return _World.default_pg is not None


def _default():
    if _World.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return _World.default_pg


def _resolve(g):
    if g is None or g is GroupMember.WORLD:
        return _default()
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"Invalid process group: {g!r}")
    if not any(g is x for x in _World.groups):
        raise ValueError("The given group does not exist (was it destroyed?)")
    return g


def _make_impl(backend, store, rank, size, timeout):
    if backend == Backend.GLOO:
        from ._gloo import ProcessGroupGloo
        return ProcessGroupGloo(store, rank, size, timeout)
    if backend == Backend.MPI:
        from ._mpi import ProcessGroupMPI
        return ProcessGroupMPI(rank, size, timeout)
    raise RuntimeError(f"Distributed package doesn't have {backend.upper()} built in "
                       f"(ember supports the 'gloo' and 'mpi' backends)")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    if _World.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of typedatetime.timedelta, got "
                        f"{type(timeout)}")
    backend = Backend(backend if backend is not None else "gloo")
    if backend == "undefined":
        backend = Backend("gloo")
    if backend == Backend.MPI:
        from . import _mpi
        rank, world_size = _mpi.world_rank_size()
        impl = _make_impl(backend, None, rank, world_size, timeout)
        pg = ProcessGroup(impl, range(world_size), backend, group_name or "0", None)
    else:
        if store is not None:
            if world_size <= 0:
                raise ValueError("world_size must be positive if using store")
            if rank < 0:
                raise ValueError("rank must be non-negative if using store")
        else:
            store, rank, world_size = next(rendezvous(init_method or "env://", rank,
                                                      world_size, timeout=timeout))
            store.set_timeout(timeout)
            _World.own_store = True         # destroy_process_group closes it
        _World.store = store
        impl = _make_impl(backend, PrefixStore("default_pg", store), rank, world_size,
                          timeout)
        pg = ProcessGroup(impl, range(world_size), backend, group_name or "0", store)
    _World.default_pg = pg
    _World.groups = [pg]
    _World.count = 1
    GroupMember.WORLD = pg


def destroy_process_group(group=None):
    if group is None or group is GroupMember.WORLD:
        for g in _World.groups:
            g._impl.shutdown()
        if _World.own_store and hasattr(_World.store, "_close"):
            _World.store._close()
        _World.default_pg, _World.groups, _World.count, _World.store = None, [], 0, None
        _World.own_store = False
        GroupMember.WORLD = None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    group._impl.shutdown()
    _World.groups = [g for g in _World.groups if g is not group]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    world = _default()
    n = world.size()
    ranks = list(range(n)) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    idx = _World.count
    _World.count += 1
    me = world.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    backend = Backend(backend) if backend is not None else world._backend
    timeout = timeout or default_pg_timeout
    if backend == Backend.MPI:
        from ._mpi import ProcessGroupMPI
        impl = ProcessGroupMPI(ranks.index(me), len(ranks), timeout, ranks=ranks)
    else:
        store = PrefixStore(f"pg{idx}", _World.store)
        impl = _make_impl(backend, store, ranks.index(me), len(ranks), timeout)
    pg = ProcessGroup(impl, ranks, backend, str(idx), _World.store)
    _World.groups.append(pg)
    return pg


def _not_member(g):
    if g is GroupMember.NON_GROUP_MEMBER:
        warnings.warn("Running a collective on a group this rank is not a member of: "
                      "it is skipped.", stacklevel=3)
        return True
    return False


def get_rank(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).rank()


def get_world_size(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return _resolve(group)._backend


def get_process_group_ranks(group):
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank):
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _resolve(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def _group_rank(pg, global_rank, group_rank, what):
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError(f"Can only specify {what} or group_{what}")
        return group_rank
    if global_rank is None:
        global_rank = 0
    return get_group_rank(pg, global_rank)


def _check_tensor(t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(t)} instead.")


def _check_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(ts)} instead.")


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


# ------------------------------------------------------------------ collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    return _finish(_resolve(group)._impl.allreduce(tensor, op), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    return _finish(pg._impl.broadcast(tensor, _group_rank(pg, src, group_src, "src")),
                   async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    return _finish(pg._impl.reduce(tensor, _group_rank(pg, dst, group_dst, "dst"), op),
                   async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    return _finish(pg._impl.allgather(list(tensor_list), tensor), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    n = pg.size()
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to "
                         f"world_size times input tensor size (got {output_tensor.numel()} "
                         f"and {n} x {input_tensor.numel()})")
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError("all_gather_into_tensor: output and input tensors must have the "
                        "same dtype")
    parts = list(output_tensor.view(n, -1).unbind(0))
    work = pg._impl.allgather(parts, input_tensor, name="all_gather_into_tensor")
    work._outputs = [output_tensor]
    return _finish(work, async_op)


def _check_root_list(pg, root, tensors, name, role):
    """gather/scatter: the root rank passes one tensor per rank, every other rank passes none."""
    if pg.rank() == root:
        _check_list(tensors, name)
        if len(tensors) != pg.size():
            raise ValueError(f"Argument ``{name}`` must have a length equal to the "
                             "number of ranks in the group")
    elif tensors:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    gdst = _group_rank(pg, dst, group_dst, "dst")
    _check_root_list(pg, gdst, gather_list, "gather_list", "destination")
    return _finish(pg._impl.gather(gather_list, tensor, gdst), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    gsrc = _group_rank(pg, src, group_src, "src")
    _check_root_list(pg, gsrc, scatter_list, "scatter_list", "source")
    return _finish(pg._impl.scatter(tensor, scatter_list, gsrc), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    if _not_member(group):
        return None
    pg = _resolve(group)
    if len(input_list) != pg.size():
        raise ValueError("reduce_scatter: input_list must have one tensor per rank")
    return _finish(pg._impl.reduce_scatter(output, list(input_list), op), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _not_member(group):
        return None
    pg = _resolve(group)
    n = pg.size()
    if input.numel() != n * output.numel():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be world_size times the "
                         f"output size (got {input.numel()} and {n} x {output.numel()})")
    parts = list(input.reshape(n, -1).unbind(0))
    return _finish(pg._impl.reduce_scatter(output, parts, op, name="reduce_scatter_tensor"),
                   async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    if _not_member(group):
        return None
    pg = _resolve(group)
    if len(output_tensor_list) != pg.size() or len(input_tensor_list) != pg.size():
        raise ValueError("all_to_all: tensor lists must have one tensor per rank")
    return _finish(pg._impl.alltoall(list(output_tensor_list), list(input_tensor_list)),
                   async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _not_member(group):
        return None
    pg = _resolve(group)
    n = pg.size()

    def parts(t, splits, what):
        rows = t.shape[0] if t.dim() else 1
        row = t.numel() // max(rows, 1)
        if splits is None or len(splits) == 0:
            if rows % n:
                raise ValueError(f"all_to_all_single: {what} dim 0 ({rows}) is not "
                                 f"divisible by the group size {n}")
            splits = [rows // n] * n
        if len(splits) != n or sum(splits) != rows:
            raise ValueError(f"all_to_all_single: {what}_split_sizes {list(splits)} must have "
                             f"{n} entries summing to {rows}")
        out, s = [], 0
        for k in splits:
            out.append((t, s * row, (s + k) * row))
            s += k
        return out
    ins = parts(input, input_split_sizes, "input")
    outs = parts(output, output_split_sizes, "output")
    work = pg._impl.alltoall(outs, ins, name="all_to_all_single")
    work._outputs = [output]
    return _finish(work, async_op)


def barrier(group=None, async_op=False, device_ids=None):
    if _not_member(group):
        return None
    return _finish(_resolve(group)._impl.barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    if _not_member(group):
        return None
    pg = _resolve(group)
    if pg._backend != Backend.GLOO:
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    secs = (timeout or timedelta(seconds=pg._impl.timeout_s)).total_seconds()
    pg._impl.monitored_barrier(secs, wait_all_ranks).wait()


# ------------------------------------------------------------------ point to point
def _p2p_peer(pg, peer, group_peer, what):
    if group_peer is not None:
        p = group_peer
    else:
        p = get_group_rank(pg, peer) if peer is not None else None
    if p is not None and p == pg.rank():
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: "
                         f"should not be the same as rank of the current process.")
    return p


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    p = _p2p_peer(pg, dst, group_dst, "dst")
    if p is None:
        raise ValueError("isend: dst or group_dst must be given")
    return pg._impl.send(tensor, p, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _resolve(group)
    return pg._impl.recv(tensor, _p2p_peer(pg, src, group_src, "src"), tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = _resolve(group)
    return pg._ranks[work.source_rank()]


class P2POp:
    """One send or receive for `batch_isend_irecv`."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv, send, recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op = isend if op in (isend, send) else irecv
        self.tensor, self.peer, self.group, self.tag = tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works
