"""Collectives on picklable Python objects (broadcast_object_list, all_gather_object, ...).

Note: objects are pickled into uint8 tensors and moved with the tensor collectives (sizes
first, then the padded payloads), as PyTorch does; only these object helpers pickle.
"""
import io
import pickle

import numpy as np

from .distributed_c10d import (_group_rank, _not_member, _resolve, all_gather, broadcast,
                               gather, scatter)

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list"]


def _from_numpy(a):
    import ember
    return ember.from_numpy(np.ascontiguousarray(a))


def _to_tensor(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    data = np.frombuffer(buf.getvalue(), np.uint8).copy()
    return _from_numpy(data), _from_numpy(np.array([data.size], np.int64))


def _to_object(t, size):
    return pickle.loads(t.numpy()[:int(size)].tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    if _not_member(group):
        return
    pg = _resolve(group)
    gsrc = _group_rank(pg, src, group_src, "src")
    me = pg.rank()
    if me == gsrc:
        pairs = [_to_tensor(o) for o in object_list]
        sizes = _from_numpy(np.array([int(p[1].item()) for p in pairs], np.int64))
    else:
        sizes = _from_numpy(np.zeros(len(object_list), np.int64))
    broadcast(sizes, group=group, group_src=gsrc)
    total = int(sizes.sum().item())
    if me == gsrc:
        payload = _from_numpy(np.concatenate([p[0].numpy() for p in pairs])
                              if pairs else np.zeros(0, np.uint8))
    else:
        payload = _from_numpy(np.zeros(total, np.uint8))
    broadcast(payload, group=group, group_src=gsrc)
    if me != gsrc:
        off, data = 0, payload.numpy()
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = pickle.loads(data[off:off + n].tobytes())
            off += n


def _padded(obj, group):
    t, size = _to_tensor(obj)
    pg = _resolve(group)
    sizes = [_from_numpy(np.zeros(1, np.int64)) for _ in range(pg.size())]
    all_gather(sizes, size, group=group)
    longest = max(int(s.item()) for s in sizes)
    padded = np.zeros(longest, np.uint8)
    padded[:t.numel()] = t.numpy()
    return _from_numpy(padded), sizes, longest, pg


def all_gather_object(object_list, obj, group=None):
    if _not_member(group):
        return
    t, sizes, longest, pg = _padded(obj, group)
    outs = [_from_numpy(np.zeros(longest, np.uint8)) for _ in range(pg.size())]
    all_gather(outs, t, group=group)
    for i, (o, s) in enumerate(zip(outs, sizes)):
        object_list[i] = _to_object(o, s.item())


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    if _not_member(group):
        return
    t, sizes, longest, pg = _padded(obj, group)
    gdst = _group_rank(pg, dst, group_dst, "dst")
    outs = [_from_numpy(np.zeros(longest, np.uint8)) for _ in range(pg.size())] \
        if pg.rank() == gdst else None
    gather(t, outs, group=group, group_dst=gdst)
    if pg.rank() == gdst:
        for i, (o, s) in enumerate(zip(outs, sizes)):
            object_gather_list[i] = _to_object(o, s.item())


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    if _not_member(group):
        return
    pg = _resolve(group)
    gsrc = _group_rank(pg, src, group_src, "src")
    if pg.rank() == gsrc:
        pairs = [_to_tensor(o) for o in scatter_object_input_list]
        longest = max(int(p[1].item()) for p in pairs)
        ins = []
        for p in pairs:
            a = np.zeros(longest, np.uint8)
            a[:p[0].numel()] = p[0].numpy()
            ins.append(_from_numpy(a))
        lens = [p[1] for p in pairs]
        mx = _from_numpy(np.array([longest], np.int64))
    else:
        ins, lens, mx = None, None, _from_numpy(np.zeros(1, np.int64))
    broadcast(mx, group=group, group_src=gsrc)
    out = _from_numpy(np.zeros(int(mx.item()), np.uint8))
    size = _from_numpy(np.zeros(1, np.int64))
    scatter(out, ins, group=group, group_src=gsrc)
    scatter(size, lens, group=group, group_src=gsrc)
    scatter_object_output_list[0] = _to_object(out, size.item())

