#ifndef CALLOCATOR_H
#define CALLOCATOR_H

#include <stddef.h>

/// Has the C allocator give each block of at least `bytes` back to the system when it is freed, from now on; returns 0,
/// or -1 when the allocator does not take the setting. Where the allocator is not glibc's, does nothing and returns 0.
int truce_allocator_unmap_blocks_from(size_t bytes);

#endif
