/* Formatting helpers shared by the host and microcontroller builds (no printf on the MCU). */
#include "tiny_io.h"

void tiny_puts(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    tiny_write(s, n);
}

void tiny_put_i32(int32_t v) {
    char buf[12];
    int i = sizeof(buf);
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do {
        buf[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) buf[--i] = '-';
    tiny_write(buf + i, sizeof(buf) - i);
}
