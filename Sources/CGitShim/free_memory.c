/* Hands the C heap's free pages back to the system: glibc keeps what a long phase freed (a million small strings, say)
 * as the process's memory until malloc needs it again, which a later phase of large allocations never does. */
#include "CGitShim.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void truce_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
