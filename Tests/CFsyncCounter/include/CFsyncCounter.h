#ifndef CFSYNCCOUNTER_H
#define CFSYNCCOUNTER_H

/* Counts the fsync and fdatasync calls the test process makes, libgit2's and Truce's own alike. */

/** 1 when this platform's calls are interposed (Linux, ELF symbol preemption), else 0 and every count stays 0. */
int truce_fsync_interposed(void);

/** Every fsync and fdatasync call the process made since it started, whatever the file. */
long truce_fsync_count(void);

/**
 * Starts counting, separately, the calls on files and directories whose path starts with `directory` (after
 * realpath), so that other tests running in the same process cannot change the figure; replaces an earlier one.
 */
int truce_fsync_watch(const char *directory);

/** The calls on files under the watched directory since `truce_fsync_watch`. */
long truce_fsync_watched_count(void);

#endif
