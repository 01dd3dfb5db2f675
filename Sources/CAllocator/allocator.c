#include "CAllocator.h"

// Before the test below: glibc defines __GLIBC__ in a header of its own (stddef.h is the compiler's).
#include <limits.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int truce_allocator_unmap_blocks_from(size_t bytes) {
#if defined(__GLIBC__)
    if (bytes > INT_MAX) return -1;
    // Setting the threshold also stops glibc from raising it each time a mapped block is freed (its default): raised,
    // large blocks come from the heap, and the heap keeps what they leave.
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 0 : -1;
#else
    (void)bytes;
    return 0;
#endif
}
