"""save / async_save (torch.distributed.checkpoint.state_dict_saver)."""
import copy
import threading

from .default_planner import DefaultSavePlanner
from .filesystem import FileSystemWriter
from .stateful import Stateful
from .utils import _DistWrapper

__all__ = ["save", "async_save", "save_state_dict"]


def _dist():
    from ... import distributed
    return distributed


def _use_dist(process_group):
    dist = _dist()
    return dist.is_initialized() and dist.get_world_size(process_group) > 1


def _set_up(storage, default_storage, checkpoint_id, planner, default_planner,
            process_group, no_dist):
    """What save and load both do first: the storage (a filesystem one at `checkpoint_id`
    when none is given), the planner, and the wrapper over the process group."""
    if storage is None:
        if checkpoint_id is None:
            raise RuntimeError("`checkpoint_id` must be specified if "
                               "storage_reader/storage_writer is None.")
        storage = default_storage(checkpoint_id)
    else:
        storage.reset(checkpoint_id)
    planner = planner if planner is not None else default_planner()
    use_dist = _use_dist(process_group) if no_dist is None else not no_dist
    return storage, planner, _DistWrapper(process_group, use_dist)


def _stateful_to_state_dict(state_dict):
    """Top-level Stateful values (modules, optimizers, wrappers) become their state_dict()."""
    return {k: v.state_dict() if isinstance(v, Stateful) else v for k, v in state_dict.items()}


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=None):
    """Every rank writes its items in parallel; the coordinator writes metadata last."""
    state_dict = _stateful_to_state_dict(state_dict)
    storage_writer, planner, dw = _set_up(storage_writer, FileSystemWriter, checkpoint_id,
                                          planner, DefaultSavePlanner, process_group, no_dist)
    box = {}

    def local_step():
        storage_writer.set_up_storage_writer(dw.is_coordinator)
        planner.set_up_planner(state_dict, storage_writer.storage_meta(), dw.is_coordinator)
        return storage_writer.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        all_plans, box["metadata"] = planner.create_global_plan(all_plans)
        return storage_writer.prepare_global_plan(all_plans)

    central_plan = dw.reduce_scatter("plan", local_step, global_step)

    def write_data():
        final = planner.finish_plan(central_plan)
        return storage_writer.write_data(final, planner).wait()

    def finish(all_results):
        storage_writer.finish(box["metadata"], all_results)
        return box["metadata"]

    return dw.all_reduce("write", write_data, finish)


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """The deprecated spelling of `save` (PyTorch keeps it)."""
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                planner=planner, no_dist=no_dist or None)


_async_groups = {}


def _stage(obj):
    """A private copy of every tensor, so training may go on while the copy is written."""
    import ember

    from ..tensor import DTensor
    if isinstance(obj, DTensor):
        return DTensor(obj.to_local().detach().clone(), obj.device_mesh, obj.placements,
                       obj.shape)
    if isinstance(obj, ember.Tensor):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return type(obj)((k, _stage(v)) for k, v in obj.items()) \
            if not hasattr(obj, "default_factory") else {k: _stage(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_stage(v) for v in obj)
    return copy.deepcopy(obj)


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None, async_checkpointer_type=None, async_stager=None,
               no_dist=False):
    """Stage (copy) the state_dict now, write it in a background thread; returns a
    concurrent.futures.Future of the Metadata, as PyTorch does.

    The background save talks over its own process group (made once per group here, a
    collective every rank runs), so training collectives on the default group can go on.
    """
    from concurrent.futures import Future
    staged = _stage(_stateful_to_state_dict(state_dict))
    dist = _dist()
    group = process_group
    if dist.is_initialized() and not no_dist and dist.get_world_size(process_group) > 1:
        from ..distributed_c10d import _World
        key = (id(process_group), id(_World.default_pg))   # a re-initialised world: new key
        if key not in _async_groups or not any(_async_groups[key] is g for g in _World.groups):
            ranks = (dist.get_process_group_ranks(process_group) if process_group is not None
                     else list(range(dist.get_world_size())))
            _async_groups[key] = dist.new_group(ranks)
        group = _async_groups[key]
    fut = Future()
    fut.set_running_or_notify_cancel()

    def run():
        try:
            fut.set_result(save(staged, checkpoint_id=checkpoint_id,
                                storage_writer=storage_writer, planner=planner,
                                process_group=group, no_dist=no_dist or None))
        except BaseException as e:
            fut.set_exception(e)
    threading.Thread(target=run, name="dcp-async-save", daemon=True).start()
    return fut
