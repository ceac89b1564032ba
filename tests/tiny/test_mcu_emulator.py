"""ember.tiny.mcu.emulator: runs Cortex-M ELFs in exactly 256 KB of SRAM, counts
instructions, measures memory, and stops with a clear error on overflow or fault."""
import sys

import pytest

from ember.tiny import mcu
from ember.tiny.mcu import emulator
from ember.tiny.mcu.toolchain import SRAM_SIZE
from tiny_support import need_toolchain


@pytest.fixture(scope="module", autouse=True)
def toolchain_here():
    need_toolchain()


def _run(src, **kw):
    return mcu.run(mcu.build_elf([("prog.c", "#include \"tiny_io.h\"\n" + src)], **kw))


LOOP = """
volatile int sink;
int main(void) {
    for (int i = 0; i < N; i++) sink = i;
    return 0;
}
"""


def test_output_channel_and_exit_code():
    res = _run('int main(void) { tiny_puts("t="); tiny_put_i32(-2147483647 - 1); '
               'return -5; }')
    assert res.text == "t=-2147483648" and res.exit_code == -5


def test_instruction_count_grows_with_the_work():
    few = _run(LOOP.replace("N", "100")).instructions
    many = _run(LOOP.replace("N", "1100")).instructions
    assert 2 * 1000 <= many - few <= 20 * 1000


def test_memory_measurements():
    res = _run("""
        int initialized[100] = {7};
        const signed char weights[5000] = {1};
        unsigned char arena[100000];
        static int deep(volatile unsigned char *p, int n) {
            volatile unsigned char buf[3000];
            buf[0] = p[0];
            buf[2999] = (unsigned char)n;
            return n ? deep(buf, n - 1) + buf[2999] : buf[0];
        }
        int main(void) {
            volatile int i = 0;
            arena[99999] = (unsigned char)weights[i];
            tiny_put_i32(initialized[0] + deep(arena + 99999, 1));
            return 0;
        }""")
    assert res.text == "9"                        # .data was copied from flash at reset
    assert res.data_bytes >= 400 and res.bss_bytes >= 100000
    assert 6000 <= res.stack_bytes < res.stack_reserved == 8192
    assert res.sram_high_water == res.data_bytes + res.bss_bytes + res.stack_bytes
    assert res.sram_high_water <= SRAM_SIZE
    assert res.rodata_bytes >= 5000
    assert res.flash_bytes >= res.text_bytes + res.rodata_bytes + res.data_bytes


def test_stack_overflow_faults_naming_the_address():
    src = """
        static int deep(volatile char *up, int n) {
            volatile char pad[256];
            pad[0] = up[0];
            return n ? deep(pad, n - 1) + pad[0] : pad[0];
        }
        int main(void) { volatile char top[1] = {1}; tiny_put_i32(deep(top, 100)); return 0; }"""
    with pytest.raises(MemoryError, match=r"0x1fff[0-9a-f]{4}.*stack overflow"):
        _run(src, stack_bytes=2048)
    assert _run(src, stack_bytes=65536).exit_code == 0


def test_program_built_for_more_sram_faults_past_the_end():
    src = ("unsigned char arena[300000];\n"
           "int main(void) { arena[299999] = 1; return arena[3]; }")
    with pytest.raises(emulator.SRAMOverflowError, match=r"0x2004[0-9a-f]{4}.*end of SRAM") \
            as info:
        _run(src, sram_bytes=512 * 1024)
    assert 0x20040000 <= info.value.address < 0x20080000


def test_fault_and_runaway_stop_with_emulator_error():
    with pytest.raises(emulator.EmulatorError, match="stopped"):
        _run("int main(void) { __builtin_trap(); return 0; }")
    with pytest.raises(emulator.EmulatorError, match="max_instructions"):
        mcu.run(mcu.build_elf([("prog.c", LOOP.replace("N", "100000000"))]),
                max_instructions=10000)


def test_cortex_m7_build_runs():
    res = _run("volatile float g = 2.5f;\nint main(void) { tiny_put_i32((int)(g * g * 100)); "
               "return 0; }", cpu="cortex-m7")
    assert res.text == "625"


def test_rejects_a_host_elf_and_missing_unicorn(monkeypatch):
    exe = mcu.build_host([("prog.c", "int main(void) { return 0; }")])
    with pytest.raises(ValueError, match="not ARM"):
        mcu.run(exe)
    monkeypatch.setitem(sys.modules, "unicorn", None)
    with pytest.raises(NotImplementedError, match="unicorn"):
        mcu.run(exe)


def test_native_and_python_instruction_counters_agree(monkeypatch):
    elf = mcu.build_elf([("prog.c", LOOP.replace("N", "500"))])
    native = mcu.run(elf).instructions
    monkeypatch.setattr(emulator, "_counter_lib", lambda: None)
    assert mcu.run(elf).instructions == native
