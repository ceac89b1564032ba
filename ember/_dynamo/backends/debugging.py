"""Debug backends (torch._dynamo.backends.debugging): run the captured graph as it is.

Why: "eager" is the backend that proves capture alone is correct. It runs the graph's
ember ops with the eager kernels, so any difference from an uncompiled run is a capture
bug, never a code-generation one.
"""
import logging

from .registry import register_debug_backend

log = logging.getLogger(__name__)


@register_debug_backend
def eager(gm, fake_tensor_inputs, **kwargs):
    """Run the captured graph op by op on the eager kernels."""
    if kwargs:
        log.warning("eager backend ignoring extra kwargs %s", kwargs)
    from ._replay import replay_function
    return replay_function(gm)
