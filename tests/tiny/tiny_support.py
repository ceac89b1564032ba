"""Shared by the tiny tests: skip without the toolchain, build one C program for both the
emulator and the host, run both."""
import pytest

from ember.tiny import mcu
from ember.tiny.kernels import KERNEL_SOURCES


def need_toolchain():
    """Skip unless a Cortex-M compiler, unicorn, pyelftools and a host C compiler are here."""
    pytest.importorskip("unicorn")
    pytest.importorskip("elftools")
    try:
        mcu.find_cross_compiler()
    except mcu.CompilerNotFound as e:
        pytest.skip(str(e))
    from ember._inductor import native
    if not native.available():
        pytest.skip("no host C compiler")


def program(decls, body):
    """A C program: the kernels' and the channel's headers, `decls`, main running `body`."""
    return ("#include <stdint.h>\n#include \"tiny_int8.h\"\n#include \"tiny_io.h\"\n"
            + "\n".join(decls) + "\nint main(void) {\n" + "\n".join(body)
            + "\n    return 0;\n}\n")


def run_both(source, **elf_kw):
    """(emulator RunResult, host stdout) of one program (the kernels linked in)."""
    sources = [("prog.c", source)] + KERNEL_SOURCES
    result = mcu.run(mcu.build_elf(sources, **elf_kw))
    out, rc = mcu.run_host(mcu.build_host(sources))
    assert rc == 0 and result.exit_code == 0
    return result, out
