#include "CGitShim.h"
#include <stdlib.h>
#include <zlib.h>

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

truce_deflater *truce_deflater_new(int level, int memory_level) {
    truce_deflater *deflater = calloc(1, sizeof(truce_deflater));
    if (deflater == NULL) return NULL;
    if (deflateInit2(&deflater->stream, level, Z_DEFLATED, 15, memory_level, Z_DEFAULT_STRATEGY) != Z_OK) {
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

size_t truce_deflater_bound(truce_deflater *deflater, size_t length) {
    /* deflateBound counts in uLong; past it, the streamed chunks add at most a few bytes each beyond compressBound's. */
    if ((uLong)length != length) return length + length / 1000 + 4096;
    return (size_t)deflateBound(&deflater->stream, (uLong)length) + 64;
}

struct truce_inflater {
    z_stream stream;
};

truce_inflater *truce_inflater_new(void) {
    truce_inflater *inflater = calloc(1, sizeof(truce_inflater));
    if (inflater == NULL) return NULL;
    if (inflateInit(&inflater->stream) != Z_OK) {
        free(inflater);
        return NULL;
    }
    return inflater;
}

int truce_inflater_inflate_exact(truce_inflater *inflater, unsigned char *out, size_t out_length, const unsigned char *in, size_t length, size_t *consumed) {
    z_stream *stream = &inflater->stream;
    int status = inflateReset(stream);
    if (status != Z_OK) return status;
    /* One byte of room more than expected, as git unpacks an entry: a stream that would go on past `out_length`
       fills it and fails, rather than stopping where the caller expected its end. */
    unsigned char spare;
    size_t produced = 0, read = 0;
    for (;;) {
        size_t out_room = out_length - produced;
        int into_spare = out_room == 0;
        uInt out_chunk = into_spare ? 1 : (out_room > 0x40000000 ? 0x40000000 : (uInt)out_room);
        size_t in_room = length - read;
        uInt in_chunk = in_room > 0x40000000 ? 0x40000000 : (uInt)in_room;
        stream->next_out = into_spare ? &spare : out + produced;
        stream->avail_out = out_chunk;
        stream->next_in = (unsigned char *)in + read;
        stream->avail_in = in_chunk;
        status = inflate(stream, Z_NO_FLUSH);
        size_t made = out_chunk - stream->avail_out;
        read += in_chunk - stream->avail_in;
        if (into_spare && made > 0) return Z_DATA_ERROR;
        produced += made;
        if (status == Z_STREAM_END) break;
        if (status != Z_OK) return status == Z_BUF_ERROR ? Z_DATA_ERROR : status;
        /* Z_OK with nothing left to read: the stream is cut short. */
        if (read == length) return Z_DATA_ERROR;
    }
    if (produced != out_length) return Z_DATA_ERROR;
    *consumed = read;
    return Z_OK;
}

void truce_inflater_free(truce_inflater *inflater) {
    if (inflater == NULL) return;
    inflateEnd(&inflater->stream);
    free(inflater);
}
