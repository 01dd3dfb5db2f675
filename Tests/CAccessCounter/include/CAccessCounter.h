#ifndef CACCESSCOUNTER_H
#define CACCESSCOUNTER_H

/* Counts the access() calls the test process makes on paths under one directory: how libgit2 looks for a loose
 * object file, one call per object. */

/** 1 when this platform's calls are interposed (Linux, ELF symbol preemption), else 0 and every count stays 0. */
int truce_access_interposed(void);

/**
 * Starts counting the calls on paths that start with `directory` (as given: pass the path the code under test
 * uses), so that other tests running in the same process cannot change the figure; replaces an earlier one.
 */
void truce_access_watch(const char *directory);

/** The calls on paths under the watched directory since `truce_access_watch`. */
long truce_access_watched_count(void);

#endif
