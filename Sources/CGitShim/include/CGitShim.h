#ifndef TRUCE_CGITSHIM_H
#define TRUCE_CGITSHIM_H

#include <git2/oid.h>
#include <git2/types.h>
#include <stddef.h>

/* Fixed-arity wrappers for git_libgit2_opts, which is variadic and so not callable from Swift, the loose-object guard,
 * and zlib's deflate for the packs a save writes (zlib is linked for the guard already). */

/** Makes libgit2 fsync object files, refs and reflogs it writes (GIT_OPT_ENABLE_FSYNC_GITDIR). */
int truce_git_enable_fsync_gitdir(int enabled);

/** Validates every object libgit2 creates against the object database (GIT_OPT_ENABLE_STRICT_OBJECT_CREATION). */
int truce_git_enable_strict_object_creation(int enabled);
int truce_git_set_cache_max_size(size_t bytes);
int truce_git_set_cache_object_limit(int type, size_t bytes);
/** The most pack files libgit2 keeps open across the process; it closes the least recently used beyond that and
 *  reopens one when it is read again (GIT_OPT_SET_MWINDOW_FILE_LIMIT; 0, the default, means no limit). */
int truce_git_set_mwindow_file_limit(size_t files);
/** How much of a pack libgit2 maps at a time (GIT_OPT_SET_MWINDOW_SIZE; 1 GiB by default on 64-bit systems). */
int truce_git_set_mwindow_size(size_t bytes);
/** How much of its packs libgit2 keeps mapped across the process before it unmaps the least recently used window
 *  (GIT_OPT_SET_MWINDOW_MAPPED_LIMIT; 8 GiB by default on 64-bit systems). */
int truce_git_set_mwindow_mapped_limit(size_t bytes);

/**
 * Adds to `odb`, at `priority`, a backend that checks a loose object's file under `objects_dir` before the
 * loose backend reads it: a truncated or corrupt zlib stream fails the read with an error naming the object
 * instead of sending libgit2 1.5.1's zlib reader into an endless loop. It stores and returns nothing itself.
 */
/* `also_packed_dir` (or NULL): another objects directory the same database reads, whose packed objects need no check. */
int truce_odb_add_loose_object_guard(git_odb *odb, const char *objects_dir, const char *also_packed_dir, int priority);
/* Tells every loose-object guard of `odb` that objects packed in `objects_dir` need no loose check (an alternate it
   now reads: a local store a sync borrows from). GIT_ERROR when a guard has no room for another pack directory. */
int truce_odb_guards_also_packed(git_odb *odb, const char *objects_dir);
/* How many loose files the loose-object guards of `odb` have looked for. */
long truce_odb_guard_looks(git_odb *odb);

/** Reads object `id` from `odb`'s backends in libgit2's order, leaving libgit2's object cache alone, and verifies that
 *  its bytes hash to `id` (GIT_EMISMATCH when not). On success `*data` holds `*length` bytes of `*type` (a `git_object_t`), to be freed
 *  with `truce_odb_data_free(*owner, *data)`; GIT_ENOTFOUND when no backend has it (`git_odb_read` then also refreshes
 *  the packs and knows the empty tree). */
int truce_odb_read_uncached(void **data, size_t *length, int *type, git_odb_backend **owner, git_odb *odb, const void *id);
/** Frees what `truce_odb_read_uncached` returned (NULL `owner` is allowed). */
void truce_odb_data_free(git_odb_backend *owner, void *data);

/** Returns the C heap's free pages to the system (glibc's malloc_trim; nothing elsewhere). */
void truce_release_free_memory(void);

/** Makes libgit2 look for no config or attributes file outside the repository: no system, XDG, global or
 *  program-data level (GIT_OPT_SET_SEARCH_PATH with an empty path for each). */
int truce_git_search_no_outside_config(void);

/** Makes libgit2 trust the CA certificates in `file` (PEM) for https, in place of the system bundle (GIT_OPT_SET_SSL_CERT_LOCATIONS). */
int truce_git_set_ssl_cert_file(const char *file);

/** syncfs(2) on Linux (the C library declares it only under _GNU_SOURCE, which Swift's Glibc module does not
 *  set); -1 with errno ENOSYS elsewhere. */
int truce_syncfs(int descriptor);

/** A zlib deflate stream kept across objects: `compress2` sets up and clears about 256 KiB of state for each. */
typedef struct truce_deflater truce_deflater;

/** A new deflater at zlib `level` (-1 for zlib's default, 0 to store) and `memory_level` (1 to 9, zlib's memLevel),
 *  or NULL when out of memory. zlib clears a hash table of 2^(memory_level + 8) bytes at every reset: 64 KiB at its
 *  default 8, more than deflating a small object costs. Storing never reads it; below memory level 8, input longer
 *  than 2^(memory_level + 6) symbols is cut into more blocks and compresses worse. */
truce_deflater *truce_deflater_new(int level, int memory_level);

/** As `truce_deflate`, on `deflater`'s stream, reset first. */
int truce_deflater_deflate(truce_deflater *deflater, unsigned char *out, size_t *out_length, const unsigned char *in, size_t length);

/** The most bytes `truce_deflater_deflate` can produce from `length` bytes with `deflater`'s settings (zlib's
 *  deflateBound: a small memLevel makes more, smaller blocks than compressBound allows for). */
size_t truce_deflater_bound(truce_deflater *deflater, size_t length);

/** Frees `deflater` (NULL is allowed). */
void truce_deflater_free(truce_deflater *deflater);

/** A zlib inflate stream kept across objects, as `truce_deflater` is for deflating. */
typedef struct truce_inflater truce_inflater;

/** A new inflater, or NULL when out of memory. */
truce_inflater *truce_inflater_new(void);

/** Inflates the zlib stream at the start of the `length` bytes at `in` into `out`, which has room for `out_length`
 *  bytes: 0 when the stream ends having produced exactly `out_length` bytes, with `*consumed` set to the stream's
 *  length (the bytes after it are not read); a zlib status otherwise, also when the stream would produce more. */
int truce_inflater_inflate_exact(truce_inflater *inflater, unsigned char *out, size_t out_length, const unsigned char *in, size_t length, size_t *consumed);

/** Frees `inflater` (NULL is allowed). */
void truce_inflater_free(truce_inflater *inflater);

/** zlib's CRC-32 of `length` bytes, continuing `crc` (0 to start): the checksum a pack index keeps per entry. */
unsigned int truce_crc32(unsigned int crc, const unsigned char *bytes, size_t length);

/** The most tips `truce_known_haves_set` takes: one round of libgit2's negotiation. */
#define TRUCE_KNOWN_HAVES_MAX 20

/** The commits a fetch names first, and alone, in its negotiation: the tips of the fetching repository's references. */
typedef struct truce_known_haves truce_known_haves;

/** An empty set (a fetch then negotiates as libgit2 does), or NULL when out of memory. */
truce_known_haves *truce_known_haves_new(void);

/** Sets `haves` to the `count` commits at `ids`; -1 (leaving it as it was) when `count` is over TRUCE_KNOWN_HAVES_MAX. */
int truce_known_haves_set(truce_known_haves *haves, const git_oid *ids, size_t count);

/** Frees `haves` (NULL is allowed), once no transport made with it is left. */
void truce_known_haves_free(truce_known_haves *haves);

/** A `git_transport_cb` body: for an http(s), git:// or ssh:// remote, libgit2's smart transport whose first round
 *  of "have" lines is replaced by `haves` when they are set by then (see known_haves.c); for any other URL, the
 *  transport libgit2 picks itself. `haves` must outlive the transport. */
int truce_transport_with_known_haves(git_transport **out, git_remote *owner, truce_known_haves *haves);

#endif
