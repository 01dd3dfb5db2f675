// Interposes fsync and fdatasync for the test binary. On Linux a definition in the executable preempts libc's for
// every caller, libgit2.so's included, so the counts are the real system calls the store asked for; each call is
// then made with syscall(), never through libc's symbol, which would be this one again.
#ifdef __linux__
#define _GNU_SOURCE
#endif
#include "CFsyncCounter.h"

#ifdef __linux__
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_long total_calls;
static atomic_long watched_calls;
// The watched prefix: written only by truce_fsync_watch, read by every interposed call.
static _Atomic(char *) watched_prefix;

int truce_fsync_interposed(void) { return 1; }

long truce_fsync_count(void) { return atomic_load(&total_calls); }

long truce_fsync_watched_count(void) { return atomic_load(&watched_calls); }

int truce_fsync_watch(const char *directory) {
    char resolved[PATH_MAX];
    if (realpath(directory, resolved) == NULL) return -1;
    // A new prefix replaces the old one, which is leaked on purpose: a call on another thread may still read it.
    const char *current = atomic_load(&watched_prefix);
    if (current == NULL || strcmp(current, resolved) != 0) atomic_store(&watched_prefix, strdup(resolved));
    atomic_store(&watched_calls, 0);
    return 0;
}

static void count(int descriptor) {
    atomic_fetch_add(&total_calls, 1);
    const char *prefix = atomic_load(&watched_prefix);
    if (prefix == NULL) return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", descriptor);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length < 0) return;
    path[length] = 0;
    size_t prefix_length = strlen(prefix);
    if (strncmp(path, prefix, prefix_length) == 0 && (path[prefix_length] == 0 || path[prefix_length] == '/'))
        atomic_fetch_add(&watched_calls, 1);
}

int fsync(int descriptor) {
    count(descriptor);
    return (int)syscall(SYS_fsync, descriptor);
}

int fdatasync(int descriptor) {
    count(descriptor);
    return (int)syscall(SYS_fdatasync, descriptor);
}

#else
int truce_fsync_interposed(void) { return 0; }
long truce_fsync_count(void) { return 0; }
int truce_fsync_watch(const char *directory) { (void)directory; return -1; }
long truce_fsync_watched_count(void) { return 0; }
#endif
