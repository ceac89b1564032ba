/* Host build of the output channel: stdout and exit(). */
#include <stdio.h>
#include <stdlib.h>
#include "tiny_io.h"

void tiny_write(const void *data, size_t n) { fwrite(data, 1, n, stdout); }

void tiny_exit(int code) {
    fflush(stdout);
    exit(code);
}
