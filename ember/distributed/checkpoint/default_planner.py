"""DefaultSavePlanner / DefaultLoadPlanner (torch.distributed.checkpoint.default_planner).

Note: nested dicts and lists are flattened to dotted keys ("optim.state.fc.weight.exp_avg");
a plain tensor is one chunk at offset 0 on every rank, so the coordinator keeps it in a single
rank's plan (the one with the fewest bytes so far): replicated data is written once. A
DTensor contributes its local shard at its global offset. Loading computes, for each local
target chunk, the overlap with every saved chunk and reads only those regions, so a
checkpoint saved with N ranks loads with any world size.
"""
import dataclasses

from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)
from .planner import (LoadItemType, LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner,
                      TensorWriteData, WriteItem, WriteItemType)

__all__ = ["DefaultSavePlanner", "DefaultLoadPlanner", "flatten_state_dict",
           "create_default_local_save_plan", "create_default_local_load_plan"]


def _is_dtensor(v):
    from ..tensor import DTensor
    return isinstance(v, DTensor)


def _is_tensor(v):
    import ember
    return isinstance(v, ember.Tensor)


def flatten_state_dict(state_dict):
    """({dotted key: leaf}, {dotted key: path}) for nested dicts/lists of tensors and objects."""
    flat, mapping = {}, {}

    def walk(obj, path):
        if isinstance(obj, dict) and obj and not _is_leaf_dict(obj):
            for k, v in obj.items():
                walk(v, path + (k,))
        elif isinstance(obj, list) and obj and any(_is_tensor(x) or _is_dtensor(x) or
                                                   isinstance(x, (dict, list)) for x in obj):
            for i, v in enumerate(obj):
                walk(v, path + (i,))
        else:
            key = ".".join(str(p) for p in path)
            if key in flat:
                raise ValueError(f"flatten_state_dict: duplicate key {key!r}")
            flat[key], mapping[key] = obj, path
    for k, v in state_dict.items():
        walk(v, (k,))
    return flat, mapping


def _is_leaf_dict(d):
    return not all(isinstance(k, (str, int)) for k in d)


def _local_chunk(v):
    """(local tensor, global offset, global size) of a tensor or DTensor value."""
    if _is_dtensor(v):
        from ..tensor import compute_local_shape_and_global_offset
        _, offset = compute_local_shape_and_global_offset(v.shape, v.device_mesh, v.placements)
        return v.to_local(), tuple(offset), tuple(v.shape)
    return v, (0,) * v.dim(), tuple(v.shape)


def create_default_local_save_plan(state_dict, is_coordinator):
    items = []
    for fqn, v in state_dict.items():
        if _is_tensor(v) or _is_dtensor(v):
            local, offset, size = _local_chunk(v)
            if local.numel() == 0 and size and min(size) > 0:
                continue                    # an empty trailing shard: nothing to write
            props = TensorProperties(v.dtype, bool(getattr(v, "requires_grad", False)))
            items.append(WriteItem(
                MetadataIndex(fqn, offset),
                WriteItemType.SHARD if _is_dtensor(v) else WriteItemType.TENSOR,
                TensorWriteData(ChunkStorageMetadata(offset, tuple(local.shape)), props, size)))
        else:
            items.append(WriteItem(MetadataIndex(fqn), WriteItemType.BYTE_IO))
    return SavePlan(items)


def _dedup(all_plans):
    """Keep each item (same fqn and offset) in one plan only: the rank with fewest bytes."""
    owners, load = {}, [0] * len(all_plans)
    for r, plan in enumerate(all_plans):
        for it in plan.items:
            owners.setdefault(it.index, []).append(r)
    keep = [[] for _ in all_plans]
    for r, plan in enumerate(all_plans):
        for it in plan.items:
            ranks = owners[it.index]
            if len(ranks) > 1:
                if r != ranks[0]:
                    continue
                r_best = min(ranks, key=lambda q: load[q])
                keep[r_best].append(it)
                load[r_best] += it.tensor_storage_size() or 0
            else:
                keep[r].append(it)
                load[r] += it.tensor_storage_size() or 0
    return [dataclasses.replace(p, items=k) for p, k in zip(all_plans, keep)]


def _build_metadata(all_plans, planner_data):
    sdm = {}
    for plan in all_plans:
        for it in plan.items:
            if it.type == WriteItemType.BYTE_IO:
                sdm[it.index.fqn] = BytesStorageMetadata()
                continue
            td = it.tensor_data
            md = sdm.setdefault(it.index.fqn,
                                TensorStorageMetadata(td.properties, td.size, []))
            if tuple(md.size) != tuple(td.size):
                raise ValueError(f"checkpoint: ranks disagree on the size of {it.index.fqn!r}: "
                                 f"{tuple(md.size)} vs {tuple(td.size)}")
            md.chunks.append(td.chunk)
    return Metadata(sdm, planner_data=planner_data)


class DefaultSavePlanner(SavePlanner):
    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False,
                 enable_plan_caching=False):
        self.flatten_state_dict = flatten_state_dict

    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        else:
            self.mappings = {k: (k,) for k in state_dict}
        self.state_dict, self.is_coordinator = state_dict, is_coordinator

    def create_local_plan(self):
        plan = create_default_local_save_plan(self.state_dict, self.is_coordinator)
        self.plan = dataclasses.replace(
            plan, planner_data={k: list(v) for k, v in self.mappings.items()})
        return self.plan

    def create_global_plan(self, all_plans):
        all_plans = _dedup(all_plans)
        mappings = {}
        for p in all_plans:
            mappings.update(p.planner_data or {})
        self.metadata = _build_metadata(all_plans, mappings)
        return all_plans, self.metadata

    def finish_plan(self, new_plan):
        self.plan = new_plan
        return new_plan

    def resolve_data(self, write_item):
        v = self.state_dict[write_item.index.fqn]
        if write_item.type == WriteItemType.BYTE_IO:
            return v
        local, _, _ = _local_chunk(v)
        return local.detach()


def _overlap(dst_off, dst_size, src_off, src_size):
    """Per-dim (dest offset, storage offset, length) of two chunks' overlap, or None."""
    d_o, s_o, ln = [], [], []
    for do, ds, so, ss in zip(dst_off, dst_size, src_off, src_size):
        lo, hi = max(do, so), min(do + ds, so + ss)
        if hi <= lo:
            return None
        d_o.append(lo - do)
        s_o.append(lo - so)
        ln.append(hi - lo)
    return tuple(d_o), tuple(s_o), tuple(ln)


def create_default_local_load_plan(state_dict, metadata, strict=True):
    items = []
    for fqn, v in state_dict.items():
        if fqn not in metadata.state_dict_metadata:
            if strict:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
            continue
        md = metadata.state_dict_metadata[fqn]
        if not (_is_tensor(v) or _is_dtensor(v)):
            items.append(ReadItem(LoadItemType.BYTE_IO, MetadataIndex(fqn), (), MetadataIndex(fqn),
                                  (), ()))
            continue
        if isinstance(md, BytesStorageMetadata):
            raise RuntimeError(f"checkpoint: {fqn!r} is a tensor in the state_dict but was "
                               f"saved as a non-tensor object")
        local, offset, size = _local_chunk(v)
        if tuple(size) != tuple(md.size):
            raise RuntimeError(f"Size mismatch between saved {tuple(md.size)} and current: "
                               f"{tuple(size)} for {fqn}")
        for chunk in md.chunks:
            ov = _overlap(offset, tuple(local.shape), chunk.offsets, chunk.sizes)
            if ov is not None:
                items.append(ReadItem(LoadItemType.TENSOR, MetadataIndex(fqn, offset), ov[0],
                                      MetadataIndex(fqn, chunk.offsets), ov[1], ov[2]))
    return LoadPlan(items)


class DefaultLoadPlanner(LoadPlanner):
    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 allow_partial_load=False):
        self.flatten_state_dict = flatten_state_dict
        self.allow_partial_load = allow_partial_load

    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        self.original_state_dict = state_dict
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        else:
            self.mappings = {k: (k,) for k in state_dict}
        self.state_dict, self.metadata, self.is_coordinator = state_dict, metadata, is_coordinator

    def create_local_plan(self):
        return create_default_local_load_plan(self.state_dict, self.metadata,
                                              not self.allow_partial_load)

    def create_global_plan(self, global_plan):
        return global_plan

    def finish_plan(self, central_plan):
        return central_plan

    def load_bytes(self, read_item, value):
        """Non-tensor values are replaced in the caller's (nested) state_dict."""
        fqn = read_item.dest_index.fqn
        self.state_dict[fqn] = value
        path = self.mappings[fqn]
        container = self.original_state_dict
        for p in path[:-1]:
            container = container[p]
        container[path[-1]] = value

    def resolve_tensor(self, read_item):
        local, _, _ = _local_chunk(self.state_dict[read_item.dest_index.fqn])
        t = local.detach()
        for d, (o, n) in enumerate(zip(read_item.dest_offsets, read_item.lengths)):
            t = t.narrow(d, o, n)
        return t

    def commit_tensor(self, read_item, tensor):
        pass
