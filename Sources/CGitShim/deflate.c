#include "CGitShim.h"
#include <stdlib.h>
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

unsigned int truce_crc32(unsigned int crc, const unsigned char *bytes, size_t length) {
    uLong value = crc;
    while (length > 0) {
        uInt chunk = length > 0x40000000 ? 0x40000000 : (uInt)length;
        value = crc32(value, bytes, chunk);
        bytes += chunk;
        length -= chunk;
    }
    return (unsigned int)value;
}

struct truce_deflater {
    z_stream stream;
};

truce_deflater *truce_deflater_new(void) {
    truce_deflater *deflater = calloc(1, sizeof(truce_deflater));
    if (deflater == NULL) return NULL;
    if (deflateInit(&deflater->stream, Z_DEFAULT_COMPRESSION) != Z_OK) {
        free(deflater);
        return NULL;
    }
    return deflater;
}

int truce_deflater_deflate(truce_deflater *deflater, unsigned char *out, size_t *out_length, const unsigned char *in, size_t length) {
    z_stream *stream = &deflater->stream;
    int status = deflateReset(stream);
    if (status != Z_OK) return status;
    size_t room = *out_length, produced = 0;
    stream->next_in = (unsigned char *)in;
    /* zlib counts in uInt: feed and drain in pieces below 1 GiB, so that a huge object neither wraps nor fails. */
    size_t left = length;
    do {
        uInt in_chunk = left > 0x40000000 ? 0x40000000 : (uInt)left;
        stream->avail_in = in_chunk;
        left -= in_chunk;
        int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
        for (;;) {
            size_t out_room = room - produced;
            if (out_room == 0) return Z_BUF_ERROR;
            uInt out_chunk = out_room > 0x40000000 ? 0x40000000 : (uInt)out_room;
            stream->next_out = out + produced;
            stream->avail_out = out_chunk;
            status = deflate(stream, flush);
            produced += out_chunk - stream->avail_out;
            if (status == Z_STREAM_ERROR) return status;
            if (flush == Z_FINISH ? status == Z_STREAM_END : stream->avail_in == 0) break;
        }
    } while (left > 0);
    if (status != Z_STREAM_END) return status == Z_OK ? Z_BUF_ERROR : status;
    *out_length = produced;
    return Z_OK;
}

void truce_deflater_free(truce_deflater *deflater) {
    if (deflater == NULL) return;
    deflateEnd(&deflater->stream);
    free(deflater);
}
