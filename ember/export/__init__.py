"""ember.export: torch.export's API on ember's capture (DESIGN §7.6).

`export(mod, args, dynamic_shapes=...)` captures one functional graph through the same
machinery as ember.compile (fullgraph), `save`/`load` write it to one zip file that runs
in a process without the model's code.
"""
from ._dynamic_shapes import Dim, dims
from ._program import (ExportedProgram, ExportGraphSignature, InputKind, OutputKind,
                       InputSpec, OutputSpec, TensorArgument, ConstantArgument,
                       SymIntArgument, ExportedModule)
from ._trace import export
from ._serialize import save, load

__all__ = ["export", "save", "load", "Dim", "dims", "ExportedProgram",
           "ExportGraphSignature", "InputKind", "OutputKind", "InputSpec", "OutputSpec",
           "TensorArgument", "ConstantArgument", "SymIntArgument", "ExportedModule",
           "aot_compile"]


def aot_compile(ep, path=None, *args, **kwargs):
    """Deployment as a shared library with a C entry point (AOTInductor's analogue)."""
    raise NotImplementedError("ember.export.aot_compile: compiling an ExportedProgram to a "
                              "shared library with a C run() entry point is issue 11 point 4, "
                              "not implemented yet")
