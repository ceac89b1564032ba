"""The default DDP comm hooks: plain all-reduce, and fp16 / bf16 compressed all-reduce.

Note: each hook divides by the group size *before* the all-reduce (PyTorch's order, so
results match bit for bit where the sums do) and returns a Future of the bucket tensor.
"""
from ... import ReduceOp, all_reduce, group as _group

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _allreduce_fut(process_group, tensor):
    group_to_use = process_group if process_group is not None else _group.WORLD
    tensor.div_(group_to_use.size())
    work = all_reduce(tensor, op=ReduceOp.SUM, group=group_to_use, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group_to_use = process_group if process_group is not None else _group.WORLD
    world_size = group_to_use.size()
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(world_size)
    work = all_reduce(compressed, group=group_to_use, async_op=True)

    def decompress(fut):
        decompressed = fut.value()[0]
        buffer.copy_(decompressed)
        return buffer
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """All-reduce the bucket in float16 (half the bytes), then cast back."""
    import ember
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """All-reduce the bucket in bfloat16, then cast back."""
    import ember
    return _compress_hook(ember.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapper(hook_state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return fut.then(decompress)
    return wrapper


def fp16_compress_wrapper(hook):
    import ember
    return _compress_wrapper(ember.float16, hook)


def bf16_compress_wrapper(hook):
    import ember
    return _compress_wrapper(ember.bfloat16, hook)
