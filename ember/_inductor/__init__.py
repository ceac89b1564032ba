"""ember's code-generating compiler backend (torch._inductor): prims -> fused C loops.

Pipeline (DESIGN §7.4): decompose.py (composites -> prims), lowering.py (prims -> ir.py
loop-level values), scheduler.py (fusion and realization), codegen_c.py (C + OpenMP),
cpp_builder.py + codecache.py (system compiler, disk cache), compile_fx.py (runtime).
"""
from . import config  # noqa: F401
