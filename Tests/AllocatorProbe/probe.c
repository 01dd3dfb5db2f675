// Built and run by LargeBlocksTests, in a process of its own (a test process's arenas hold what other tests freed):
// whether glibc maps a block of twice the threshold on its own, before and after
// truce_allocator_unmap_blocks_from(threshold), once glibc has raised its own threshold past that size.
#include <stdio.h>
#include <stdlib.h>

#include "CAllocator.h"

// glibc marks a chunk it mapped on its own with IS_MMAPPED, bit 1 of the size word before the block.
static int is_mapped(void *block) { return (((size_t *)block)[-1] & 2) != 0; }

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    size_t threshold = strtoull(argv[1], NULL, 10), size = 2 * threshold;
    // A freed block of 16 MB raises glibc's threshold to its size, as a batch's buffers did (volatile: a compiler
    // may drop a block that is freed unused).
    void *volatile raising = malloc(16 << 20);
    free(raising);
    void *before = malloc(size);
    int status = truce_allocator_unmap_blocks_from(threshold);
    void *after = malloc(size);
    if (before == NULL || after == NULL) return 3;
    printf("mapped before: %d, setting: %d, mapped after: %d\n", is_mapped(before), status, is_mapped(after));
    free(before);
    free(after);
    return 0;
}
