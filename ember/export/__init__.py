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
from ._aot_compile import aot_compile


def export_for_training(mod, args, kwargs=None, *, dynamic_shapes=None, strict=True,
                        preserve_module_call_signature=()):
    """torch.export.export_for_training: ember's export already keeps the aten-level ops
    (conv, linear, batch_norm) that pt2e quantization annotates, so it is export."""
    return export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict,
                  preserve_module_call_signature=preserve_module_call_signature)


__all__ = ["export", "save", "load", "Dim", "dims", "ExportedProgram",
           "ExportGraphSignature", "InputKind", "OutputKind", "InputSpec", "OutputSpec",
           "TensorArgument", "ConstantArgument", "SymIntArgument", "ExportedModule",
           "aot_compile", "export_for_training"]

