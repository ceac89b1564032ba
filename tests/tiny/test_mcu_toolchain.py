"""ember.tiny.mcu.toolchain: Cortex-M ELFs (flash/SRAM placement, caching, clear errors) and
host builds of the same C."""
import sys

import pytest

from ember.tiny.mcu import toolchain
from ember.tiny.mcu.toolchain import FLASH_SIZE, SRAM_BASE, SRAM_SIZE
from tiny_support import need_toolchain

PROG = """#include "tiny_io.h"
const signed char weights[3000] = {1, 2, 3};
signed char arena[20000];
int counter = 41;
int main(void) {
    volatile int i = 2;
    arena[19999] = weights[i];
    counter += arena[19999] - 2;
    tiny_puts("counter=");
    tiny_put_i32(counter);
    return arena[19999];
}
"""


@pytest.fixture(scope="module")
def toolchain_here():
    need_toolchain()


def _sections(path):
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        elf = ELFFile(f)
        return elf["e_machine"], {s.name: (s["sh_addr"], s["sh_size"])
                                  for s in elf.iter_sections() if s["sh_flags"] & 2}


def test_elf_places_weights_in_flash_and_arena_in_sram(toolchain_here):
    elf = toolchain.build_elf([("prog.c", PROG)])
    machine, secs = _sections(elf)
    assert machine == "EM_ARM"
    rod_addr, rod_size = secs[".rodata"]
    assert rod_addr + rod_size <= FLASH_SIZE and rod_size >= 3000
    bss_addr, bss_size = secs[".bss"]
    assert SRAM_BASE <= bss_addr and bss_addr + bss_size <= SRAM_BASE + SRAM_SIZE
    assert bss_size >= 20000
    assert secs[".isr_vector"][0] == 0


def test_builds_are_cached_by_source(toolchain_here):
    a = toolchain.build_elf([("prog.c", PROG)])
    assert toolchain.build_elf([("prog.c", PROG)]) == a
    assert toolchain.build_elf([("prog.c", PROG + "\n")]) != a
    assert toolchain.build_elf([("prog.c", PROG)], opt="-Os") != a
    assert toolchain.build_elf([("prog.c", PROG)], stack_bytes=4096) != a


def test_host_build_prints_the_same(toolchain_here):
    from ember.tiny.mcu import run
    out, rc = toolchain.run_host(toolchain.build_host([("prog.c", PROG)]))
    res = run(toolchain.build_elf([("prog.c", PROG)]))
    assert out == res.output == b"counter=42"
    assert rc == res.exit_code == 3


def test_program_larger_than_sram_is_rejected_at_link_time(toolchain_here):
    src = PROG.replace("arena[20000]", "arena[300000]").replace("19999", "299999")
    with pytest.raises(RuntimeError, match="do not fit in the board's 256 KB of SRAM"):
        toolchain.build_elf([("big.c", src)])


def test_compile_error_and_bad_arguments(toolchain_here):
    with pytest.raises(RuntimeError, match="build failed"):
        toolchain.build_elf([("bad.c", "int main(void) { return undefined_name; }")])
    with pytest.raises(ValueError, match="cpu"):
        toolchain.build_elf([("prog.c", PROG)], cpu="cortex-a53")
    with pytest.raises(ValueError, match="stack_bytes"):
        toolchain.build_elf([("prog.c", PROG)], stack_bytes=100)


def test_no_cross_compiler_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ziglang", None)
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    toolchain.find_cross_compiler.cache_clear()
    try:
        with pytest.raises(NotImplementedError, match="ziglang.*gcc-arm-none-eabi"):
            toolchain.build_elf([("prog.c", PROG)])
    finally:
        toolchain.find_cross_compiler.cache_clear()
