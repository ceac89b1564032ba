"""Exceptions of the capture, with torch._dynamo.exc's names."""

__all__ = ["TorchDynamoException", "Unsupported", "RemoteCallBreak", "RecompileError",
           "BackendCompilerFailed", "InternalTorchDynamoError", "UserError", "RestartAnalysis"]


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """A construct the capture cannot put in a graph (a graph break, or with
    fullgraph=True the error); `msg` names the construct, the user's line is added."""

    def __init__(self, msg, *, user_stack=None):
        super().__init__(msg)
        self.msg = msg
        self.user_stack = user_stack or []

    def __str__(self):
        if not self.user_stack:
            return self.msg
        fs = self.user_stack[-1]
        return f"{self.msg}\n  from user code at {fs.filename}:{fs.lineno} in {fs.name}"


class RemoteCallBreak(Unsupported):
    """A call that must run outside any graph (RPC, distributed futures): a graph break
    even for jit.script, which then runs the function with breaks there (issue 14)."""


class RecompileError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_fn, inner):
        name = getattr(backend_fn, "__name__", repr(backend_fn))
        super().__init__(f"backend='{name}' raised:\n{type(inner).__name__}: {inner}")
        self.backend_name, self.inner_exception = name, inner


class InternalTorchDynamoError(TorchDynamoException):
    pass


class UserError(TorchDynamoException):
    pass


class RestartAnalysis(Exception):
    """Internal: capture of a segment restarts (a break deeper in an inlined call)."""
