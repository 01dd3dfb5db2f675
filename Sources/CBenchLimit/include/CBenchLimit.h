#ifndef TRUCE_CBENCHLIMIT_H
#define TRUCE_CBENCHLIMIT_H
#include <stddef.h>

/* The benchmark's "limit" baseline: libgit2's git_merge_file called directly from C, result freed, nothing else.
 * Returns the merged length, or -1 when libgit2 failed. */
long truce_bench_merge_file(const char *base, size_t base_len, const char *ours, size_t ours_len,
                            const char *theirs, size_t theirs_len);

#endif
