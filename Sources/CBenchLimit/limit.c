#include "CBenchLimit.h"
#include <git2.h>

long truce_bench_merge_file(const char *base, size_t base_len, const char *ours, size_t ours_len,
                            const char *theirs, size_t theirs_len) {
    git_merge_file_input ancestor, mine, other;
    git_merge_file_input_init(&ancestor, GIT_MERGE_FILE_INPUT_VERSION);
    git_merge_file_input_init(&mine, GIT_MERGE_FILE_INPUT_VERSION);
    git_merge_file_input_init(&other, GIT_MERGE_FILE_INPUT_VERSION);
    ancestor.ptr = base; ancestor.size = base_len;
    mine.ptr = ours; mine.size = ours_len;
    other.ptr = theirs; other.size = theirs_len;
    git_merge_file_options options;
    git_merge_file_options_init(&options, GIT_MERGE_FILE_OPTIONS_VERSION);
    options.flags = GIT_MERGE_FILE_SIMPLIFY_ALNUM;
    git_merge_file_result result = {0};
    if (git_merge_file(&result, &ancestor, &mine, &other, &options) < 0) return -1;
    long length = (long)result.len;
    git_merge_file_result_free(&result);
    return length;
}
