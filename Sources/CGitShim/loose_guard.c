/*
 * An object database backend that reads nothing itself: it checks a loose
 * object's file before libgit2's loose backend inflates it.
 *
 * libgit2 1.5.1's zlib reader (git_zstream_get_output) loops forever on a
 * loose object truncated to 2..size-1 bytes: inflate reports Z_BUF_ERROR,
 * the loop neither fails nor gets more input (fixed upstream after 1.5.2).
 * Placed above the loose backend, this guard inflates the file with zlib
 * into a scratch buffer; a stream that ends early or does not inflate is an
 * error naming the object, anything else passes through to the real backends.
 */
#include "CGitShim.h"
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <zlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* The packs of one objects directory, as last scanned. */
typedef struct {
    git_odb_backend *backend;
    int objects_fd;
    struct timespec seen;
} pack_set;

/* The guarded directory's packs, a quarantine's download, and a local store a sync borrows objects from. */
#define GUARD_PACK_SETS 3

typedef struct {
    git_odb_backend parent;
    char *objects_dir;
    /* Pack backends of its own, on the guarded directory (packs[0]) and on another one the same object database
       reads (a quarantine's download): an object they find is packed, and needs no loose check (packed copies are
       read before loose ones). Each is refreshed when its pack directory changes; NULL when it could not be made.
       packs[0]'s descriptor is also where loose files are opened: a failed open relative to it walks two path
       components instead of the whole absolute path. */
    pack_set packs[GUARD_PACK_SETS];
    /* Loose files looked for: what a read of a packed object must never cost (tests count it). */
    long looks;
} loose_guard;

/* The loose format check libgit2 uses: a zlib header, else the old pack-like format. */
static int looks_like_zlib(const unsigned char *data, size_t length) {
    if (length < 2) return 0;
    unsigned int word = ((unsigned int)data[0] << 8) + data[1];
    return (data[0] & 0x8F) == 0x08 && word % 31 == 0;
}

static int damaged(const char *hex, const char *reason) {
    char message[200];
    snprintf(message, sizeof message, "loose object %s is damaged (%s); restore objects/%.2s/%s from a replica or remove it",
             hex, reason, hex, hex + 2);
    git_error_set_str(GIT_ERROR_ODB, message);
    return GIT_ERROR;
}

/* GIT_PASSTHROUGH when the loose file of `hex` is absent, unreadable (libgit2 then says why) or whole; GIT_ERROR when damaged. */
static int check_loose_object(loose_guard *guard, const char *hex) {
    char path[4096];
    int descriptor;
    __atomic_add_fetch(&guard->looks, 1, __ATOMIC_RELAXED);
    if (guard->packs[0].objects_fd >= 0) {
        char relative[GIT_OID_HEXSZ + 2];
        snprintf(relative, sizeof relative, "%.2s/%s", hex, hex + 2);
        descriptor = openat(guard->packs[0].objects_fd, relative, O_RDONLY | O_CLOEXEC);
    } else {
        if (snprintf(path, sizeof path, "%s/%.2s/%s", guard->objects_dir, hex, hex + 2) >= (int)sizeof path) return GIT_PASSTHROUGH;
        descriptor = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (descriptor < 0) return GIT_PASSTHROUGH;

    static const int chunk = 16384;
    unsigned char *input = malloc(chunk), *output = malloc(4 * chunk);
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    int result = GIT_PASSTHROUGH, status = Z_OK, first = 1;
    if (!input || !output || inflateInit(&stream) != Z_OK) goto done;
    ssize_t count = 0;
    while (status != Z_STREAM_END && (count = read(descriptor, input, chunk)) > 0) {
        unsigned char *next = input;
        size_t available = (size_t)count;
        if (first) {
            first = 0;
            /* A pack-like loose object: a size varint (continuation bit 0x80), then the zlib stream. */
            if (!looks_like_zlib(next, available)) {
                while (available > 0 && (*next & 0x80)) { next++; available--; }
                if (available > 0) { next++; available--; }
            }
        }
        stream.next_in = next;
        stream.avail_in = (uInt)available;
        while (stream.avail_in > 0 && status == Z_OK) {
            stream.next_out = output;
            stream.avail_out = 4 * chunk;
            status = inflate(&stream, Z_NO_FLUSH);
        }
        if (status != Z_OK && status != Z_STREAM_END) break;
    }
    if (status == Z_STREAM_END || count < 0) result = GIT_PASSTHROUGH; /* a read error is libgit2's to report */
    else if (status == Z_OK || status == Z_BUF_ERROR) result = damaged(hex, "its zlib stream ends early");
    else result = damaged(hex, "its zlib stream does not inflate");
done:
    inflateEnd(&stream);
    free(input);
    free(output);
    close(descriptor);
    return result;
}

static void open_pack_set(pack_set *set, const char *objects_dir) {
    set->objects_fd = open(objects_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (git_odb_backend_pack(&set->backend, objects_dir) < 0) { set->backend = NULL; git_error_clear(); }
    struct stat status;
    if (set->objects_fd >= 0 && fstatat(set->objects_fd, "pack", &status, 0) == 0) set->seen = status.st_mtim;
}

static void close_pack_set(pack_set *set) {
    if (set->objects_fd >= 0) close(set->objects_fd);
    if (set->backend) set->backend->free(set->backend);
}

/* Whether `id` is in one of the set's packs, rescanning them first when `rescan` and objects/pack changed since last seen. */
static int pack_set_has(pack_set *set, const git_oid *id, int rescan) {
    if (!set->backend || set->objects_fd < 0) return 0;
    if (set->backend->exists(set->backend, id)) return 1;
    if (!rescan) return 0;
    struct stat status;
    if (fstatat(set->objects_fd, "pack", &status, 0) != 0) return 0;
    if (status.st_mtim.tv_sec == set->seen.tv_sec && status.st_mtim.tv_nsec == set->seen.tv_nsec) return 0;
    set->seen = status.st_mtim;
    if (set->backend->refresh(set->backend) < 0) { git_error_clear(); return 0; }
    return set->backend->exists(set->backend, id);
}

/* Whether `id` is packed in either directory: the packs as scanned first, then rescanned where they changed. */
static int is_packed(loose_guard *guard, const git_oid *id) {
    for (int rescan = 0; rescan < 2; rescan++) {
        for (int index = 0; index < GUARD_PACK_SETS; index++) {
            if (pack_set_has(&guard->packs[index], id, rescan)) return 1;
        }
    }
    return 0;
}

static int guard_read(void **data, size_t *length, git_object_t *type, git_odb_backend *backend, const git_oid *id) {
    (void)data; (void)length; (void)type;
    if (is_packed((loose_guard *)backend, id)) return GIT_PASSTHROUGH;
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, id);
    return check_loose_object((loose_guard *)backend, hex);
}

static int guard_readstream(git_odb_stream **stream, size_t *length, git_object_t *type, git_odb_backend *backend, const git_oid *id) {
    (void)stream;
    return guard_read(NULL, length, type, backend, id);
}

/* Checks every loose object whose id starts with the first `length` hex digits of `prefix`. */
static int guard_read_prefix(git_oid *found, void **data, size_t *size, git_object_t *type, git_odb_backend *backend,
                             const git_oid *prefix, size_t length) {
    (void)found; (void)data; (void)size; (void)type;
    loose_guard *guard = (loose_guard *)backend;
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, prefix);
    if (length >= GIT_OID_HEXSZ) return check_loose_object(guard, hex);
    if (length < 2) return GIT_PASSTHROUGH;
    char directory[4096];
    if (snprintf(directory, sizeof directory, "%s/%.2s", guard->objects_dir, hex) >= (int)sizeof directory) return GIT_PASSTHROUGH;
    DIR *listing = opendir(directory);
    if (!listing) return GIT_PASSTHROUGH;
    int result = GIT_PASSTHROUGH;
    struct dirent *entry;
    while (result == GIT_PASSTHROUGH && (entry = readdir(listing)) != NULL) {
        if (strlen(entry->d_name) != GIT_OID_HEXSZ - 2 || strncmp(entry->d_name, hex + 2, length - 2) != 0) continue;
        char candidate[GIT_OID_HEXSZ + 1];
        snprintf(candidate, sizeof candidate, "%.2s%s", hex, entry->d_name);
        result = check_loose_object(guard, candidate);
    }
    closedir(listing);
    return result;
}

static void guard_free(git_odb_backend *backend) {
    loose_guard *guard = (loose_guard *)backend;
    for (int index = 0; index < GUARD_PACK_SETS; index++) close_pack_set(&guard->packs[index]);
    free(guard->objects_dir);
    free(guard);
}

int truce_odb_add_loose_object_guard(git_odb *odb, const char *objects_dir, const char *also_packed_dir, int priority) {
    loose_guard *guard = calloc(1, sizeof *guard);
    if (!guard) return GIT_ERROR;
    git_odb_init_backend(&guard->parent, GIT_ODB_BACKEND_VERSION);
    for (int index = 0; index < GUARD_PACK_SETS; index++) guard->packs[index].objects_fd = -1;
    guard->objects_dir = strdup(objects_dir);
    open_pack_set(&guard->packs[0], objects_dir);
    if (also_packed_dir) open_pack_set(&guard->packs[1], also_packed_dir);
    guard->parent.read = guard_read;
    guard->parent.read_prefix = guard_read_prefix;
    guard->parent.readstream = guard_readstream;
    guard->parent.free = guard_free;
    int error = guard->objects_dir ? git_odb_add_backend(odb, &guard->parent, priority) : GIT_ERROR;
    if (error < 0) guard_free(&guard->parent);
    return error;
}

int truce_odb_guards_also_packed(git_odb *odb, const char *objects_dir) {
    size_t count = git_odb_num_backends(odb);
    for (size_t position = 0; position < count; position++) {
        git_odb_backend *backend = NULL;
        if (git_odb_get_backend(&backend, odb, position) < 0) return GIT_ERROR;
        if (backend->read != guard_read) continue;
        loose_guard *guard = (loose_guard *)backend;
        int index = 0;
        while (index < GUARD_PACK_SETS && (guard->packs[index].backend || guard->packs[index].objects_fd >= 0)) index++;
        if (index == GUARD_PACK_SETS) return GIT_ERROR;
        open_pack_set(&guard->packs[index], objects_dir);
    }
    return 0;
}

long truce_odb_guard_looks(git_odb *odb) {
    long looks = 0;
    size_t count = git_odb_num_backends(odb);
    for (size_t position = 0; position < count; position++) {
        git_odb_backend *backend = NULL;
        if (git_odb_get_backend(&backend, odb, position) < 0 || backend->read != guard_read) continue;
        looks += __atomic_load_n(&((loose_guard *)backend)->looks, __ATOMIC_RELAXED);
    }
    return looks;
}
