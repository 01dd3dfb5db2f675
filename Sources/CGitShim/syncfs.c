#define _GNU_SOURCE
#include "CGitShim.h"
#include <errno.h>
#include <unistd.h>

int truce_syncfs(int descriptor) {
#if defined(__linux__)
    return syncfs(descriptor);
#else
    (void)descriptor;
    errno = ENOSYS;
    return -1;
#endif
}
