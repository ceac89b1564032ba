/* The emulator's only peripheral: a byte-wide output register and an exit register. */
#ifndef TINY_MMIO_H
#define TINY_MMIO_H
#define TINY_MMIO_BASE 0x40000000u
#define TINY_MMIO_OUT  (*(volatile unsigned char *)(TINY_MMIO_BASE + 0x0))
#define TINY_MMIO_EXIT (*(volatile unsigned int *)(TINY_MMIO_BASE + 0x4))
#endif
