"""@rpc.functions.async_execution: the function returns a Future; the server thread is
released at once and the response is sent when that Future completes."""
import functools

__all__ = ["async_execution"]


def async_execution(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper._wrapped_async_rpc_function = fn
    return wrapper
