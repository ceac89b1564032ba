"""Backends whose compilers are the next issue: "aot_eager" and "inductor".

Why registered now: `ember.compile`'s default backend is "inductor", as PyTorch's, and
programs name "aot_eager"; both must be valid names today. Until AOT autograd and the C
code generator exist (issue 10) they run the captured graph on the eager kernels, which is
correct but not faster, and say so once per process with a warning.
"""
import os
import sys
import warnings


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_warned = set()


def _warn_once(name, what):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"ember.compile backend={name!r}: {what} is issue 10 and not built yet; the "
            "captured graph runs on the eager kernels (correct results, no speed-up)",
            UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The stacklevel of the first caller outside ember, so the warning names the user's
    line (the compiled call), not the capture's internals."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


from .aot import aot_eager  # noqa: E402,F401  (AOT autograd, ember/_functorch; registers itself)


from .inductor import inductor  # noqa: E402,F401  (ember/_inductor; registers itself)
