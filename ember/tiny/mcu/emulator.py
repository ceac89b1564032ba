"""Run a Cortex-M ELF in unicorn with exactly the microcontroller's memory: 1 MB of flash at
0x00000000, 256 KB of SRAM at 0x20000000, and one 4 KB MMIO page at 0x40000000 (an output
byte register and an exit register, see runtime/tiny_mmio.h). Nothing else is mapped, so a
program that needs more SRAM than the board has — an arena past the end, a stack that grows
below the SRAM base — stops with `SRAMOverflowError` naming the address.

Note: measurements.
- `instructions`: Thumb instructions executed, counted per executed basic block by a small
  C callback (built once by the host compiler, ember._inductor.native; a Python callback,
  ten times slower, when there is none). It is an instruction count, not a cycle
  count; a Cortex-M4 takes about 1-1.5 cycles per instruction on this code (loads and taken
  branches cost more), so treat it as a lower bound on cycles.
- `sram_high_water`: SRAM is filled with a pattern word before reset; after the run
  .data and .bss count as used in full, and the stack's depth is the distance from its top
  (`_estack`; the stack sits below .data, see runtime/link.ld) down to the lowest word that
  no longer holds the pattern.
- section sizes come from the ELF (pyelftools): flash = everything loaded into flash
  (vectors, .text, .rodata incl. const weights, .data's initial values).
"""
import ctypes
import dataclasses
import functools
import struct

from .toolchain import FLASH_BASE, FLASH_SIZE, SRAM_BASE, SRAM_SIZE

__all__ = ["run", "RunResult", "SRAMOverflowError", "EmulatorError", "MMIO_BASE"]

MMIO_BASE = 0x40000000
_MMIO_SIZE = 0x1000
_OUT, _EXIT = MMIO_BASE, MMIO_BASE + 4
_PATTERN = 0xDEADBEEF
_FAULT_TAG = 0xFA170000


class EmulatorError(RuntimeError):
    """The program did not finish: a fault, an instruction limit, or an unknown stop."""


class SRAMOverflowError(MemoryError):
    """An access outside flash, SRAM and the MMIO page (the program does not fit)."""

    def __init__(self, msg, address):
        super().__init__(msg)
        self.address = address


@dataclasses.dataclass
class RunResult:
    """What one run of a program produced and used."""
    output: bytes                  # bytes written to the output register
    exit_code: int                 # main's return value
    instructions: int              # Thumb instructions executed (not cycles, see Note)
    sram_high_water: int           # bytes of SRAM used: .data + .bss + deepest stack
    stack_bytes: int               # deepest stack use
    stack_reserved: int            # the stack region the program was linked with
    data_bytes: int                # .data (initialized, in SRAM and flash)
    bss_bytes: int                 # .bss (zeroed: the arena lives here)
    text_bytes: int                # code + vectors
    rodata_bytes: int              # const data in flash (weights)
    flash_bytes: int               # everything that has to be in flash

    @property
    def text(self):
        return self.output.decode("utf-8", "replace")


def _unicorn():
    try:
        import unicorn
        from unicorn import arm_const
    except ImportError as e:
        raise NotImplementedError(
            "ember.tiny.mcu.emulator needs the 'unicorn' package "
            "(pip install 'ember[tiny]' or pip install unicorn)") from e
    return unicorn, arm_const


def _layout(path):
    """(loadable segments [(addr, bytes)], entry, section sizes, symbols) from the ELF."""
    try:
        from elftools.elf.elffile import ELFFile
    except ImportError as e:
        raise NotImplementedError("ember.tiny.mcu.emulator needs the 'pyelftools' package "
                                  "(pip install 'ember[tiny]')") from e
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if elf["e_machine"] != "EM_ARM":
            raise ValueError(f"emulator.run: {path} is a {elf['e_machine']} ELF, not ARM")
        segs = [(s["p_paddr"], s.data()) for s in elf.iter_segments()
                if s["p_type"] == "PT_LOAD" and s["p_filesz"]]
        sizes = {}
        for s in elf.iter_sections():
            if s["sh_flags"] & 2:                       # SHF_ALLOC
                sizes[s.name] = s["sh_size"]
        symtab = elf.get_section_by_name(".symtab")
        syms = {} if symtab is None else {
            s.name: s["st_value"] for s in symtab.iter_symbols() if s.name}
        return segs, elf.header["e_entry"], sizes, syms


def run(elf_path, max_instructions=200_000_000, cpu="cortex-m4"):
    """Run `elf_path` from reset to its exit; a RunResult (see the module Note)."""
    unicorn, a = _unicorn()
    segs, entry, sizes, syms = _layout(elf_path)
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    model = {"cortex-m4": a.UC_CPU_ARM_CORTEX_M4, "cortex-m7": a.UC_CPU_ARM_CORTEX_M7}[cpu]
    uc.ctl_set_cpu_model(model)
    uc.mem_map(FLASH_BASE, FLASH_SIZE, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)
    uc.mem_map(SRAM_BASE, SRAM_SIZE, unicorn.UC_PROT_ALL)
    uc.mem_map(MMIO_BASE, _MMIO_SIZE, unicorn.UC_PROT_READ | unicorn.UC_PROT_WRITE)
    for addr, data in segs:
        if not (FLASH_BASE <= addr and addr + len(data) <= FLASH_BASE + FLASH_SIZE):
            raise SRAMOverflowError(
                f"emulator.run: a loadable segment at {addr:#010x} ({len(data)} bytes) lies "
                f"outside the {FLASH_SIZE // 1024} KB flash", addr)
        uc.mem_write(addr, data)
    uc.mem_write(SRAM_BASE, struct.pack("<I", _PATTERN) * (SRAM_SIZE // 4))

    state = {"out": bytearray(), "exit": None, "bad": None}

    def on_mmio(uc_, access, address, size, value, _):
        if address == _OUT:
            state["out"].append(value & 0xFF)
        elif address == _EXIT:
            state["exit"] = value & 0xFFFFFFFF
            uc_.emu_stop()

    def on_invalid(uc_, access, address, size, value, _):
        state["bad"] = (access, address, size)
        return False

    uc.hook_add(unicorn.UC_HOOK_MEM_WRITE, on_mmio, begin=MMIO_BASE,
                end=MMIO_BASE + _MMIO_SIZE - 1)
    count = _block_counter(uc, bytes(uc.mem_read(FLASH_BASE, FLASH_SIZE)))
    uc.hook_add(unicorn.UC_HOOK_MEM_INVALID, on_invalid)
    sp0 = struct.unpack("<I", uc.mem_read(FLASH_BASE, 4))[0]
    uc.reg_write(a.UC_ARM_REG_SP, sp0)
    try:
        uc.emu_start(entry | 1, 0xFFFFFFFF, count=max_instructions)
    except unicorn.UcError as e:
        if state["bad"] is not None:
            raise _overflow(state["bad"], uc.reg_read(a.UC_ARM_REG_PC),
                            uc.reg_read(a.UC_ARM_REG_SP), syms) from None
        raise EmulatorError(f"emulator.run: the program stopped with '{e}' at pc "
                            f"{uc.reg_read(a.UC_ARM_REG_PC):#010x}") from None
    code = state["exit"]
    if code is None:
        raise EmulatorError(f"emulator.run: no exit after {max_instructions} instructions "
                            "(raise max_instructions, or the program loops forever)")
    if code & 0xFFFF0000 == _FAULT_TAG:
        raise EmulatorError(f"emulator.run: the program took exception {code & 0xFFFF} "
                            "(a fault: bad instruction, unaligned or bus error)")
    if code & 0x80000000:
        code -= 1 << 32
    state["count"] = count()
    return _result(uc, state, code, sizes, syms)


_COUNTER_C = r"""
#include <stdint.h>
typedef struct { uint64_t count; const uint8_t *code; uint64_t size; } em_tiny_counter;
/* unicorn block hook: add the Thumb instructions of the block at `address` (in flash). */
void em_tiny_count_block(void *uc, uint64_t address, uint32_t size, void *user) {
    em_tiny_counter *c = (em_tiny_counter *)user;
    (void)uc;
    if (address + size > c->size) { c->count += size / 2; return; }
    const uint8_t *p = c->code + address;
    uint64_t n = 0;
    for (uint32_t i = 0; i + 1 < size; n++) {
        uint32_t hw = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8;
        i += (hw >> 11) >= 0x1D ? 4 : 2;
    }
    c->count += n;
}
"""


class _Counter(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint64), ("code", ctypes.c_void_p), ("size", ctypes.c_uint64)]


@functools.lru_cache(maxsize=None)
def _counter_lib():
    from ..._inductor.native import load_native
    return load_native("tiny emulator counter", _COUNTER_C)


def _block_counter(uc, flash):
    """Install the instruction counter; returns a function giving the count so far."""
    import unicorn
    from unicorn.unicorn_py3 import unicorn as uc_mod
    lib = _counter_lib()
    if lib is None:
        counts, total = {}, [0]

        def on_block(uc_, address, size, _):
            n = counts.get((address, size))
            if n is None:
                n = counts[(address, size)] = _thumb_count(uc_.mem_read(address, size))
            total[0] += n
        uc.hook_add(unicorn.UC_HOOK_BLOCK, on_block)
        return lambda: total[0]
    code = ctypes.create_string_buffer(flash, len(flash))
    state = _Counter(0, ctypes.cast(code, ctypes.c_void_p), len(flash))
    handle = ctypes.c_size_t()
    fn = ctypes.cast(lib.em_tiny_count_block, ctypes.c_void_p)
    err = uc_mod.uclib.uc_hook_add(uc._uch, ctypes.byref(handle), unicorn.UC_HOOK_BLOCK, fn,
                                   ctypes.cast(ctypes.pointer(state), ctypes.c_void_p), 1, 0)
    if err:
        raise EmulatorError(f"emulator.run: could not install the instruction counter "
                            f"(unicorn error {err})")
    uc._tiny_counter = (code, state, handle)       # alive as long as the engine
    return lambda: state.count


def _thumb_count(code):
    """Instructions in a Thumb block: a halfword whose top five bits are 0b11101, 0b11110 or
    0b11111 starts a 32-bit instruction."""
    n = i = 0
    while i + 1 < len(code):
        hw = code[i] | code[i + 1] << 8
        i += 4 if (hw >> 11) in (0x1D, 0x1E, 0x1F) else 2
        n += 1
    return n


def _overflow(bad, pc, sp, syms):
    import unicorn
    access, address, size = bad
    kind = {unicorn.UC_MEM_WRITE_UNMAPPED: "write", unicorn.UC_MEM_READ_UNMAPPED: "read",
            unicorn.UC_MEM_FETCH_UNMAPPED: "instruction fetch"}.get(access, "access")
    if SRAM_BASE - 0x100000 <= address < SRAM_BASE:
        why = "the stack grew below the SRAM base (stack overflow)"
    elif SRAM_BASE + SRAM_SIZE <= address < SRAM_BASE + SRAM_SIZE + 0x1000000:
        why = "past the end of SRAM (the arena or data do not fit)"
    else:
        why = "an address that is neither flash, SRAM nor the MMIO page"
    return SRAMOverflowError(
        f"emulator.run: {size}-byte {kind} at {address:#010x}: {why}; SRAM is "
        f"{SRAM_BASE:#010x}-{SRAM_BASE + SRAM_SIZE:#010x} ({SRAM_SIZE // 1024} KB), "
        f"pc={pc:#010x} sp={sp:#010x}", address)


def _result(uc, state, code, sizes, syms):
    top = syms["_estack"] - SRAM_BASE
    sram = bytes(uc.mem_read(SRAM_BASE, top))
    data, bss = sizes.get(".data", 0), sizes.get(".bss", 0)
    pattern = struct.pack("<I", _PATTERN)
    low = top                                       # lowest word the stack changed
    for off in range(0, top, 4):
        if sram[off:off + 4] != pattern:
            low = off
            break
    stack = top - low
    text = sizes.get(".isr_vector", 0) + sizes.get(".text", 0)
    rodata = sizes.get(".rodata", 0)
    flash = text + rodata + sizes.get(".ARM.exidx", 0) + data
    return RunResult(bytes(state["out"]), code, state["count"], data + bss + stack, stack,
                     top, data, bss, text, rodata, flash)
