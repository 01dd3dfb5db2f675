/*
 * A fetch whose "have" lines start from the tips of the fetching repository.
 *
 * libgit2 1.5's fetch negotiation (protocol v0) walks every reference of the
 * fetching repository newest first and sends 20 "have" lines before it reads
 * an answer; upload-pack acknowledges each one it holds, and over stateless
 * http libgit2 then sends every acknowledged line again with "done", which
 * the server acknowledges again. When the server holds the tips themselves
 * (a repository offering what the server advertised last time), they alone
 * settle the negotiation. This wraps libgit2's own subtransports (http,
 * git://, ssh) and rewrites the first request that carries "have" lines: its
 * wants stay as they are, its haves become those tips. libgit2 reads the
 * answer as it reads any answer to a round of its own; a later round (none
 * after a round the server acknowledged) goes out untouched.
 */
#include "CGitShim.h"
#include <git2.h>
#include <git2/sys/transport.h>
#include <stdlib.h>
#include <string.h>

struct truce_known_haves {
    git_oid ids[TRUCE_KNOWN_HAVES_MAX];
    size_t count;
};

truce_known_haves *truce_known_haves_new(void) { return calloc(1, sizeof(truce_known_haves)); }

int truce_known_haves_set(truce_known_haves *haves, const git_oid *ids, size_t count) {
    if (!haves || count > TRUCE_KNOWN_HAVES_MAX) return -1;
    if (count > 0) memcpy(haves->ids, ids, count * sizeof(git_oid));
    haves->count = count;
    return 0;
}

void truce_known_haves_free(truce_known_haves *haves) { free(haves); }

typedef struct trimming_stream trimming_stream;

typedef struct {
    git_smart_subtransport parent;
    git_smart_subtransport *inner;
    truce_known_haves *haves;
    /* The wrapper of the inner stream handed out last: a stateful subtransport (git://, ssh) hands out the same
       stream for the listing and the negotiation, and libgit2 checks that it gets the same one back. */
    trimming_stream *current;
    /* Set once a request's haves were rewritten: only the first round is. */
    int rewritten;
} trimming_subtransport;

struct trimming_stream {
    git_smart_subtransport_stream parent;
    git_smart_subtransport_stream *inner;
    trimming_subtransport *owner;
};

/* The length of the pkt-line at `data` (0 for a flush), or -1 when it is not one that fits in `left` bytes. */
static long pkt_length(const char *data, size_t left) {
    if (left < 4) return -1;
    long length = 0;
    for (int i = 0; i < 4; i++) {
        char c = data[i];
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0) return -1;
        length = length * 16 + digit;
    }
    if (length == 0) return 0;
    if (length < 4 || (size_t)length > left) return -1;
    return length;
}

static int is_have(const char *data, long length) { return length > 9 && memcmp(data + 4, "have ", 5) == 0; }

/* `request` with its "have" lines replaced by `haves`, in `*out` (to be freed), or 0 when it has none or does not
   parse as pkt-lines (then it goes out as libgit2 wrote it). */
static int rewrite(char **out, size_t *out_length, const char *request, size_t length, const truce_known_haves *haves) {
    size_t have_lines = 0;
    for (size_t at = 0; at < length;) {
        long line = pkt_length(request + at, length - at);
        if (line < 0) return 0;
        if (is_have(request + at, line)) have_lines++;
        at += line == 0 ? 4 : (size_t)line;
    }
    if (have_lines == 0) return 0;
    const size_t have_size = 4 + 5 + GIT_OID_HEXSZ + 1;
    char *rewritten = malloc(length + haves->count * have_size);
    if (!rewritten) return -1;
    size_t written = 0;
    int inserted = 0;
    for (size_t at = 0; at < length;) {
        long line = pkt_length(request + at, length - at);
        size_t size = line == 0 ? 4 : (size_t)line;
        if (is_have(request + at, line)) {
            if (!inserted) {
                for (size_t i = 0; i < haves->count; i++) {
                    char hex[GIT_OID_HEXSZ + 1];
                    git_oid_tostr(hex, sizeof hex, &haves->ids[i]);
                    memcpy(rewritten + written, "0032have ", 9);
                    memcpy(rewritten + written + 9, hex, GIT_OID_HEXSZ);
                    rewritten[written + 9 + GIT_OID_HEXSZ] = '\n';
                    written += have_size;
                }
                inserted = 1;
            }
        } else {
            memcpy(rewritten + written, request + at, size);
            written += size;
        }
        at += size;
    }
    *out = rewritten;
    *out_length = written;
    return 1;
}

static int stream_read(git_smart_subtransport_stream *stream, char *buffer, size_t size, size_t *read) {
    trimming_stream *self = (trimming_stream *)stream;
    return self->inner->read(self->inner, buffer, size, read);
}

static int stream_write(git_smart_subtransport_stream *stream, const char *buffer, size_t length) {
    trimming_stream *self = (trimming_stream *)stream;
    trimming_subtransport *owner = self->owner;
    if (owner->rewritten || owner->haves->count == 0) return self->inner->write(self->inner, buffer, length);
    char *rewritten = NULL;
    size_t rewritten_length = 0;
    int outcome = rewrite(&rewritten, &rewritten_length, buffer, length, owner->haves);
    if (outcome < 0) {
        git_error_set_oom();
        return -1;
    }
    if (outcome == 0) return self->inner->write(self->inner, buffer, length);
    owner->rewritten = 1;
    int error = self->inner->write(self->inner, rewritten, rewritten_length);
    free(rewritten);
    return error;
}

static void stream_free(git_smart_subtransport_stream *stream) {
    trimming_stream *self = (trimming_stream *)stream;
    if (self->owner->current == self) self->owner->current = NULL;
    self->inner->free(self->inner);
    free(self);
}

static int subtransport_action(git_smart_subtransport_stream **out, git_smart_subtransport *transport, const char *url,
                               git_smart_service_t action) {
    trimming_subtransport *self = (trimming_subtransport *)transport;
    git_smart_subtransport_stream *inner = NULL;
    int error = self->inner->action(&inner, self->inner, url, action);
    if (error < 0) return error;
    if (self->current && self->current->inner == inner) {
        *out = &self->current->parent;
        return 0;
    }
    trimming_stream *stream = calloc(1, sizeof(trimming_stream));
    if (!stream) {
        git_error_set_oom();
        return -1;
    }
    stream->parent.subtransport = transport;
    stream->parent.read = stream_read;
    stream->parent.write = stream_write;
    stream->parent.free = stream_free;
    stream->inner = inner;
    stream->owner = self;
    self->current = stream;
    *out = &stream->parent;
    return 0;
}

static int subtransport_close(git_smart_subtransport *transport) {
    trimming_subtransport *self = (trimming_subtransport *)transport;
    return self->inner->close(self->inner);
}

static void subtransport_free(git_smart_subtransport *transport) {
    trimming_subtransport *self = (trimming_subtransport *)transport;
    self->inner->free(self->inner);
    free(self);
}

typedef struct {
    git_smart_subtransport_cb make;
    truce_known_haves *haves;
} trimming_definition;

static int make_subtransport(git_smart_subtransport **out, git_transport *owner, void *param) {
    trimming_definition *definition = param;
    trimming_subtransport *self = calloc(1, sizeof(trimming_subtransport));
    if (!self) {
        git_error_set_oom();
        return -1;
    }
    int error = definition->make(&self->inner, owner, NULL);
    if (error < 0) {
        free(self);
        return error;
    }
    self->parent.action = subtransport_action;
    self->parent.close = subtransport_close;
    self->parent.free = subtransport_free;
    self->haves = definition->haves;
    *out = &self->parent;
    return 0;
}

static int has_prefix(const char *url, const char *prefix) { return strncmp(url, prefix, strlen(prefix)) == 0; }

int truce_transport_with_known_haves(git_transport **out, git_remote *owner, truce_known_haves *haves) {
    const char *url = git_remote_url(owner);
    if (!haves) return git_transport_new(out, owner, url);
    trimming_definition definition = {NULL, haves};
    unsigned rpc = 0;
    if (has_prefix(url, "http://") || has_prefix(url, "https://")) {
        definition.make = git_smart_subtransport_http;
        rpc = 1;
    } else if (has_prefix(url, "git://")) {
        definition.make = git_smart_subtransport_git;
    } else if (has_prefix(url, "ssh://") || has_prefix(url, "ssh+git://") || has_prefix(url, "git+ssh://")) {
        definition.make = git_smart_subtransport_ssh;
    } else {
        /* A local path, file://, or scp-like ssh: as libgit2 would choose, with its own negotiation. */
        return git_transport_new(out, owner, url);
    }
    /* git_transport_smart makes the subtransport at once and keeps neither the definition nor its parameter. */
    git_smart_subtransport_definition smart = {make_subtransport, rpc, &definition};
    return git_transport_smart(out, owner, &smart);
}
