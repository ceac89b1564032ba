/* Cortex-M startup for ember.tiny: the vector table, the reset handler (copy .data from
   flash, zero .bss, run main, report its status), the output channel over MMIO, and the
   only libc the generated programs use (memcpy, memset). The stack pointer is the first
   vector: the top of the 256 KB SRAM. */
#include <stddef.h>
#include <stdint.h>
#include "tiny_io.h"
#include "tiny_mmio.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);

void tiny_write(const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) TINY_MMIO_OUT = p[i];
}

void tiny_exit(int code) {
    TINY_MMIO_EXIT = (unsigned int)code;
    for (;;) {
    }
}

void *memcpy(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    unsigned char *d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

void tiny_reset(void) {
    uint32_t *src = &_sidata;
    for (uint32_t *dst = &_sdata; dst < &_edata;) *dst++ = *src++;
    for (uint32_t *dst = &_sbss; dst < &_ebss;) *dst++ = 0;
    tiny_exit(main());
}

/* Any fault stops the run with status 0xFA17 + the exception number. */
static void tiny_fault(void) {
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    tiny_exit((int)(0xFA170000u | ipsr));
}

__attribute__((section(".isr_vector"), used))
static const void *const tiny_vectors[16] = {
    &_estack, tiny_reset, tiny_fault, tiny_fault, tiny_fault, tiny_fault, tiny_fault,
    0, 0, 0, 0, tiny_fault, tiny_fault, 0, tiny_fault, tiny_fault,
};
