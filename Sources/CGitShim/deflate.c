#include "CGitShim.h"
#include <zlib.h>

size_t truce_deflate_bound(size_t length) {
    return (size_t)compressBound((uLong)length);
}

int truce_deflate(unsigned char *out, size_t *out_length, const unsigned char *in, size_t length) {
    /* zlib's sizes are uLong: on a platform where that is narrower than size_t, a huge object must fail, not wrap. */
    if ((uLong)length != length || (uLong)*out_length != *out_length) return Z_BUF_ERROR;
    uLong produced = (uLong)*out_length;
    int status = compress2(out, &produced, in, (uLong)length, Z_DEFAULT_COMPRESSION);
    *out_length = (size_t)produced;
    return status;
}
