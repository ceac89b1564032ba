"""The microcontroller layer: a Cortex-M toolchain (toolchain.py), an emulator with exactly
256 KB of SRAM (emulator.py), and the startup code and linker script (runtime/)."""
from .emulator import EmulatorError, RunResult, SRAMOverflowError, run
from .toolchain import CompilerNotFound, build_elf, build_host, find_cross_compiler, run_host

__all__ = ["build_elf", "build_host", "run_host", "run", "find_cross_compiler", "RunResult",
           "EmulatorError", "SRAMOverflowError", "CompilerNotFound"]
