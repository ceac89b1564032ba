"""load (torch.distributed.checkpoint.state_dict_loader): fills the state_dict in place."""
from .default_planner import DefaultLoadPlanner
from .filesystem import FileSystemReader
from .state_dict_saver import _set_up
from .stateful import Stateful

__all__ = ["load", "load_state_dict"]


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=None):
    """Each rank reads the regions of saved chunks that overlap its own tensors/shards.

    A top-level Stateful value is loaded through its state_dict(), then given the filled
    dict back with load_state_dict(), as PyTorch does."""
    stateful = {k: v for k, v in state_dict.items() if isinstance(v, Stateful)}
    if stateful:
        inner = {k: stateful[k].state_dict() if k in stateful else v
                 for k, v in state_dict.items()}
        load(inner, checkpoint_id=checkpoint_id, storage_reader=storage_reader,
             planner=planner, process_group=process_group, no_dist=no_dist)
        for k, v in inner.items():
            if k in stateful:
                stateful[k].load_state_dict(v)
            else:
                state_dict[k] = v       # top-level non-tensors were replaced in `inner`
        return
    storage_reader, planner, dw = _set_up(storage_reader, FileSystemReader, checkpoint_id,
                                          planner, DefaultLoadPlanner, process_group, no_dist)

    def local_step():
        metadata = storage_reader.read_metadata()
        planner.set_up_planner(state_dict, metadata, dw.is_coordinator)
        storage_reader.set_up_storage_reader(metadata, dw.is_coordinator)
        return storage_reader.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        return storage_reader.prepare_global_plan(planner.create_global_plan(all_plans))

    central_plan = dw.reduce_scatter("plan", local_step, global_step)

    def read_data():
        final = planner.finish_plan(central_plan)
        storage_reader.read_data(final, planner).wait()

    dw.all_reduce("read", read_data, lambda _: None)


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """The deprecated spelling of `load` (PyTorch keeps it)."""
    return load(state_dict, storage_reader=storage_reader, process_group=process_group,
                planner=planner, no_dist=no_dist or None)
