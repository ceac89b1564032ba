/* ember.tiny's output channel: the same calls on the host (stdout, exit) and on the
   microcontroller (a write-only MMIO register the emulator reads). */
#ifndef TINY_IO_H
#define TINY_IO_H
#include <stddef.h>
#include <stdint.h>

void tiny_write(const void *data, size_t n);   /* raw bytes to the host */
void tiny_puts(const char *s);                 /* a NUL-terminated string, no newline added */
void tiny_put_i32(int32_t v);                  /* decimal text */
void tiny_exit(int code);                      /* stop the program with an exit status */

/* The only libc a program may use: the host's, or startup.c's on the microcontroller. */
#if __STDC_HOSTED__
#include <string.h>
#else
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
#endif

#endif
