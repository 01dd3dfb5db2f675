// Interposes access for the test binary. On Linux a definition in the executable preempts libc's for every caller,
// libgit2.so's included; each call is then made with syscall(), never through libc's symbol, which would be this one
// again.
#ifdef __linux__
#define _GNU_SOURCE
#endif
#include "CAccessCounter.h"

#ifdef __linux__
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_long watched_calls;
// The watched prefix: written only by truce_access_watch, read by every interposed call.
static _Atomic(char *) watched_prefix;

int truce_access_interposed(void) { return 1; }

void truce_access_watch(const char *directory) {
    // A new prefix replaces the old one, which is leaked on purpose: a call on another thread may still read it.
    atomic_store(&watched_prefix, strdup(directory));
    atomic_store(&watched_calls, 0);
}

long truce_access_watched_count(void) { return atomic_load(&watched_calls); }

int access(const char *path, int mode) {
    const char *prefix = atomic_load(&watched_prefix);
    if (prefix != NULL && path != NULL && strncmp(path, prefix, strlen(prefix)) == 0) atomic_fetch_add(&watched_calls, 1);
    return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode);
}

#else
int truce_access_interposed(void) { return 0; }
void truce_access_watch(const char *directory) { (void)directory; }
long truce_access_watched_count(void) { return 0; }
#endif
