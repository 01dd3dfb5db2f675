// The crash explorer's tracer: an LD_PRELOAD library that records every file-system call a process makes under one
// directory, in order, so that a test can rebuild the states a power cut could leave; and that can kill the process
// (or stop it) just before the Nth such call, so that a test can leave a store exactly as a killed writer would.
//
// Built by the tests with the toolchain's C compiler (see CrashTrace.swift); never linked into the library.
//
// TRUCE_TRACE_ROOT   the directory to trace (a realpath); calls on anything else are not recorded
// TRUCE_TRACE_OUT    the file the records go to (appended, one write per record)
// TRUCE_TRACE_STOP   "N" or "N:pause": SIGKILL (or sleep a minute) just before the Nth recorded call, counted from 1
// TRUCE_TRACE_READS  "1": also record what the process reads under the directory (opens, reads, directory listings,
//                    mappings), for tests that count a command's work; these records take no call number
//
// A record: kind (1 byte), sequence (u32), inode (u64), second inode (u64), offset (i64), length (u64), then the path,
// the second path (each a u32 length and bytes) and the data (length bytes, for writes and acknowledgements); numbers
// little-endian. A write to standard output is recorded (kind ACK) wherever it goes: what the process acknowledged.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
    KIND_CREATE = 1,    // path, inode: a new regular file
    KIND_TRUNCATE = 2,  // inode, length: the file's size set (an open with O_TRUNC is one, to 0)
    KIND_WRITE = 3,     // inode, offset, data
    KIND_SYNC = 4,      // inode, path (for a directory): fsync or fdatasync (length 1 for fdatasync)
    KIND_RENAME = 5,    // path → path2; inode of the file moved, inode2 of the one replaced (0 if none)
    KIND_UNLINK = 6,    // path, inode
    KIND_LINK = 7,      // path → path2 (a new name for the file at path), inode
    KIND_MKDIR = 8,     // path, inode
    KIND_RMDIR = 9,     // path
    KIND_ACK = 10,      // data written to standard output
    KIND_SYNC_ALL = 11, // sync() or syncfs()
    KIND_EXTEND = 12,   // inode, offset, length: fallocate (zeros up to offset + length, when it grows the file)
    // Only with TRUCE_TRACE_READS:
    KIND_OPEN = 13,     // path, inode: any open of a file or directory
    KIND_READ = 14,     // inode, length: bytes read (read, pread, readv)
    KIND_LIST = 15,     // path: a directory opened for listing (opendir)
    KIND_MAP = 16,      // inode, length: a mapping of a file (the kernel reads only the pages touched)
};

#define MAX_DESCRIPTORS 65536

static char root[PATH_MAX];
static size_t root_length;
static int out_descriptor = -1;
static unsigned long stop_at;
static int stop_pauses;
static int records_reads;
static unsigned long sequence;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
// Descriptors opened on traced paths: their inode, and for directories their path (for a directory fsync).
static unsigned char traced[MAX_DESCRIPTORS];
static uint64_t descriptor_inode[MAX_DESCRIPTORS];
static char *descriptor_directory[MAX_DESCRIPTORS];

// Shared writable mappings of traced files, recorded as writes when unmapped or synced.
typedef struct {
    void *address;
    size_t length;
    uint64_t inode;
    off_t offset;
} Mapping;
static Mapping mappings[64];

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_creat)(const char *, mode_t);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_truncate)(const char *, off_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_posix_fallocate)(int, off_t, off_t);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned int);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_rmdir)(const char *);
static int (*real_link)(const char *, const char *);
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_mkdir)(const char *, mode_t);
static int (*real_mkdirat)(int, const char *, mode_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_msync)(void *, size_t, int);
static ssize_t (*real_copy_file_range)(int, off_t *, int, off_t *, size_t, unsigned int);
static ssize_t (*real_sendfile)(int, int, off_t *, size_t);

#define RESOLVE(name) real_##name = dlsym(RTLD_NEXT, #name)

static volatile int resolved;

// The real calls, looked up once; an interposed call can come before this library's constructor has run.
static void resolve_all(void) {
    if (resolved) return;
    RESOLVE(open); RESOLVE(openat); RESOLVE(creat); RESOLVE(close); RESOLVE(write); RESOLVE(pwrite); RESOLVE(writev);
    RESOLVE(pwritev); RESOLVE(ftruncate); RESOLVE(truncate); RESOLVE(fallocate); RESOLVE(posix_fallocate);
    RESOLVE(rename); RESOLVE(renameat); RESOLVE(renameat2); RESOLVE(unlink); RESOLVE(unlinkat); RESOLVE(rmdir);
    RESOLVE(link); RESOLVE(linkat); RESOLVE(mkdir); RESOLVE(mkdirat); RESOLVE(mmap); RESOLVE(munmap); RESOLVE(msync);
    RESOLVE(copy_file_range); RESOLVE(sendfile);
    resolved = 1;
}

__attribute__((constructor)) static void start(void) {
    resolve_all();
    const char *directory = getenv("TRUCE_TRACE_ROOT"), *out = getenv("TRUCE_TRACE_OUT"), *stop = getenv("TRUCE_TRACE_STOP");
    if (directory == NULL || realpath(directory, root) == NULL) return;
    root_length = strlen(root);
    if (out != NULL) out_descriptor = (int)syscall(SYS_openat, AT_FDCWD, out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stop != NULL) {
        stop_at = strtoul(stop, NULL, 10);
        stop_pauses = strstr(stop, ":pause") != NULL;
    }
    const char *reads = getenv("TRUCE_TRACE_READS");
    records_reads = reads != NULL && strcmp(reads, "1") == 0;
}

static int tracing(void) { return root_length > 0; }

// `path` made absolute (against the working directory or `directory`'s descriptor) and normalized; 0 when it cannot be.
static int absolute(int directory, const char *path, char *result) {
    char joined[PATH_MAX * 2];
    if (path == NULL) return 0;
    if (path[0] == '/') {
        snprintf(joined, sizeof joined, "%s", path);
    } else {
        char base[PATH_MAX];
        if (directory == AT_FDCWD) {
            if (getcwd(base, sizeof base) == NULL) return 0;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", directory);
            ssize_t length = readlink(link, base, sizeof base - 1);
            if (length < 0) return 0;
            base[length] = 0;
        }
        snprintf(joined, sizeof joined, "%s/%s", base, path);
    }
    // Lexically: "." and ".." and repeated slashes.
    char *parts[512];
    int count = 0;
    char *save = NULL;
    for (char *part = strtok_r(joined, "/", &save); part != NULL; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0) continue;
        if (strcmp(part, "..") == 0) {
            if (count > 0) count--;
            continue;
        }
        if (count < 512) parts[count++] = part;
    }
    size_t used = 0;
    result[0] = 0;
    for (int index = 0; index < count; index++) {
        int written = snprintf(result + used, PATH_MAX - used, "/%s", parts[index]);
        if (written < 0 || (size_t)written >= PATH_MAX - used) return 0;
        used += (size_t)written;
    }
    if (count == 0) strcpy(result, "/");
    return 1;
}

static int under_root(const char *path) {
    return strncmp(path, root, root_length) == 0 && (path[root_length] == 0 || path[root_length] == '/');
}

static uint64_t inode_of_path(const char *path) {
    struct stat status;
    return lstat(path, &status) == 0 ? (uint64_t)status.st_ino : 0;
}

static uint64_t inode_of_descriptor(int descriptor) {
    struct stat status;
    return fstat(descriptor, &status) == 0 ? (uint64_t)status.st_ino : 0;
}

static void put(unsigned char **cursor, const void *bytes, size_t count) {
    memcpy(*cursor, bytes, count);
    *cursor += count;
}

// Writes one record; the caller holds `lock`.
static void emit(int kind, unsigned long number, uint64_t inode, uint64_t inode2, int64_t offset, uint64_t length,
                 const char *path, const char *path2, const void *data, size_t data_length) {
    if (out_descriptor < 0) return;
    uint32_t path_length = path ? (uint32_t)strlen(path) : 0, path2_length = path2 ? (uint32_t)strlen(path2) : 0;
    size_t total = 1 + 4 + 8 + 8 + 8 + 8 + 4 + path_length + 4 + path2_length + data_length;
    unsigned char *record = malloc(total), *cursor = record;
    if (record == NULL) return;
    unsigned char byte = (unsigned char)kind;
    uint32_t number32 = (uint32_t)number;
    put(&cursor, &byte, 1);
    put(&cursor, &number32, 4);
    put(&cursor, &inode, 8);
    put(&cursor, &inode2, 8);
    put(&cursor, &offset, 8);
    put(&cursor, &length, 8);
    put(&cursor, &path_length, 4);
    if (path_length) put(&cursor, path, path_length);
    put(&cursor, &path2_length, 4);
    if (path2_length) put(&cursor, path2, path2_length);
    if (data_length) put(&cursor, data, data_length);
    size_t done = 0;
    while (done < total) {
        ssize_t wrote = (ssize_t)syscall(SYS_write, out_descriptor, record + done, total - done);
        if (wrote <= 0) break;
        done += (size_t)wrote;
    }
    free(record);
}

// Takes the next sequence number for a call about to be made, and stops the process there when asked; holds `lock`.
static unsigned long next_call(void) {
    pthread_mutex_lock(&lock);
    unsigned long number = ++sequence;
    if (stop_at != 0 && number == stop_at) {
        if (stop_pauses) {
            char message[128];
            int length = snprintf(message, sizeof message, "truce-trace: stopped at call %lu, pid %d\n", number, getpid());
            syscall(SYS_write, 2, message, (size_t)length);
            sleep(60);
        } else {
            kill(getpid(), SIGKILL);
        }
    }
    return number;
}

static void done(void) { pthread_mutex_unlock(&lock); }

static int descriptor_is_traced(int descriptor) {
    return tracing() && descriptor >= 0 && descriptor < MAX_DESCRIPTORS && traced[descriptor];
}

static void note_descriptor(int descriptor, const char *path) {
    if (descriptor < 0 || descriptor >= MAX_DESCRIPTORS) return;
    struct stat status;
    if (fstat(descriptor, &status) != 0) return;
    traced[descriptor] = 1;
    descriptor_inode[descriptor] = (uint64_t)status.st_ino;
    free(descriptor_directory[descriptor]);
    descriptor_directory[descriptor] = S_ISDIR(status.st_mode) ? strdup(path) : NULL;
}

static void forget_descriptor(int descriptor) {
    if (descriptor < 0 || descriptor >= MAX_DESCRIPTORS) return;
    traced[descriptor] = 0;
    free(descriptor_directory[descriptor]);
    descriptor_directory[descriptor] = NULL;
}

// Records an open for a count of work (TRUCE_TRACE_READS); the caller holds `lock`.
static void record_open(int descriptor, const char *path) {
    if (records_reads && descriptor >= 0 && descriptor < MAX_DESCRIPTORS) {
        emit(KIND_OPEN, sequence, descriptor_inode[descriptor], 0, 0, 0, path, NULL, NULL, 0);
    }
}

// --- opening and closing

static int traced_open(int directory, const char *path, int flags, mode_t mode, int at) {
    char full[PATH_MAX];
    if (!tracing() || !absolute(directory, path, full) || !under_root(full)) {
        return at ? real_openat(directory, path, flags, mode) : real_open(path, flags, mode);
    }
    int writes = (flags & (O_WRONLY | O_RDWR)) != 0;
    int mutates = (flags & O_CREAT) || ((flags & O_TRUNC) && writes);
    if (!mutates) {
        int descriptor = at ? real_openat(directory, path, flags, mode) : real_open(path, flags, mode);
        if (descriptor >= 0) {
            pthread_mutex_lock(&lock);
            note_descriptor(descriptor, full);
            record_open(descriptor, full);
            done();
        }
        return descriptor;
    }
    unsigned long number = next_call();
    int existed = inode_of_path(full) != 0;
    int descriptor = at ? real_openat(directory, path, flags, mode) : real_open(path, flags, mode);
    int saved = errno;
    if (descriptor >= 0) {
        note_descriptor(descriptor, full);
        record_open(descriptor, full);
        uint64_t inode = inode_of_descriptor(descriptor);
        if (!existed) emit(KIND_CREATE, number, inode, 0, 0, 0, full, NULL, NULL, 0);
        else if ((flags & O_TRUNC) && writes) emit(KIND_TRUNCATE, number, inode, 0, 0, 0, full, NULL, NULL, 0);
    }
    done();
    errno = saved;
    return descriptor;
}

int open(const char *path, int flags, ...) {
    resolve_all();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list arguments;
        va_start(arguments, flags);
        mode = va_arg(arguments, mode_t);
        va_end(arguments);
    }
    return traced_open(AT_FDCWD, path, flags, mode, 0);
}

int open64(const char *path, int flags, ...) {
    resolve_all();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list arguments;
        va_start(arguments, flags);
        mode = va_arg(arguments, mode_t);
        va_end(arguments);
    }
    return traced_open(AT_FDCWD, path, flags, mode, 0);
}

int openat(int directory, const char *path, int flags, ...) {
    resolve_all();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list arguments;
        va_start(arguments, flags);
        mode = va_arg(arguments, mode_t);
        va_end(arguments);
    }
    return traced_open(directory, path, flags, mode, 1);
}

int openat64(int directory, const char *path, int flags, ...) {
    resolve_all();
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list arguments;
        va_start(arguments, flags);
        mode = va_arg(arguments, mode_t);
        va_end(arguments);
    }
    return traced_open(directory, path, flags, mode, 1);
}

int __open_2(const char *path, int flags) { resolve_all(); return traced_open(AT_FDCWD, path, flags, 0, 0); }
int __open64_2(const char *path, int flags) { resolve_all(); return traced_open(AT_FDCWD, path, flags, 0, 0); }
int __openat_2(int directory, const char *path, int flags) { resolve_all(); return traced_open(directory, path, flags, 0, 1); }
int __openat64_2(int directory, const char *path, int flags) { resolve_all(); return traced_open(directory, path, flags, 0, 1); }

// mkstemp and its kin open through glibc's internal open, which no interposer sees: traced here instead (libgit2
// makes a fetched pack's file and its temporary files so).
static int (*real_mkostemps)(char *, int, int);

static int traced_mkstemp(char *template, int suffix, int flags) {
    if (real_mkostemps == NULL) real_mkostemps = dlsym(RTLD_NEXT, "mkostemps");
    char full[PATH_MAX];
    if (!tracing() || !absolute(AT_FDCWD, template, full) || !under_root(full)) return real_mkostemps(template, suffix, flags);
    unsigned long number = next_call();
    int descriptor = real_mkostemps(template, suffix, flags);
    int saved = errno;
    if (descriptor >= 0 && absolute(AT_FDCWD, template, full)) {
        note_descriptor(descriptor, full);
        emit(KIND_CREATE, number, inode_of_descriptor(descriptor), 0, 0, 0, full, NULL, NULL, 0);
    }
    done();
    errno = saved;
    return descriptor;
}

int mkstemp(char *template) { resolve_all(); return traced_mkstemp(template, 0, 0); }
int mkstemp64(char *template) { resolve_all(); return traced_mkstemp(template, 0, 0); }
int mkostemp(char *template, int flags) { resolve_all(); return traced_mkstemp(template, 0, flags); }
int mkostemp64(char *template, int flags) { resolve_all(); return traced_mkstemp(template, 0, flags); }
int mkstemps(char *template, int suffix) { resolve_all(); return traced_mkstemp(template, suffix, 0); }
int mkstemps64(char *template, int suffix) { resolve_all(); return traced_mkstemp(template, suffix, 0); }
int mkostemps(char *template, int suffix, int flags) { resolve_all(); return traced_mkstemp(template, suffix, flags); }
int mkostemps64(char *template, int suffix, int flags) { resolve_all(); return traced_mkstemp(template, suffix, flags); }

int creat(const char *path, mode_t mode) { resolve_all(); return traced_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0); }
int creat64(const char *path, mode_t mode) { resolve_all(); return creat(path, mode); }

int close(int descriptor) {
    resolve_all();
    if (descriptor_is_traced(descriptor)) {
        pthread_mutex_lock(&lock);
        forget_descriptor(descriptor);
        done();
    }
    return real_close(descriptor);
}

// --- writing

static void record_write(unsigned long number, int descriptor, int64_t offset, const void *data, size_t length) {
    emit(KIND_WRITE, number, descriptor_inode[descriptor], 0, offset, length, NULL, NULL, data, length);
}

static void acknowledge(const void *data, ssize_t length) {
    if (!tracing() || length <= 0) return;
    pthread_mutex_lock(&lock);
    emit(KIND_ACK, sequence, 0, 0, 0, (uint64_t)length, NULL, NULL, data, (size_t)length);
    done();
}

ssize_t write(int descriptor, const void *data, size_t length) {
    resolve_all();
    if (descriptor == STDOUT_FILENO) {
        ssize_t wrote = real_write(descriptor, data, length);
        acknowledge(data, wrote);
        return wrote;
    }
    if (!descriptor_is_traced(descriptor)) return real_write(descriptor, data, length);
    unsigned long number = next_call();
    ssize_t wrote = real_write(descriptor, data, length);
    int saved = errno;
    if (wrote > 0) record_write(number, descriptor, (int64_t)lseek(descriptor, 0, SEEK_CUR) - wrote, data, (size_t)wrote);
    done();
    errno = saved;
    return wrote;
}

static ssize_t traced_pwrite(int descriptor, const void *data, size_t length, off_t offset) {
    if (!descriptor_is_traced(descriptor)) return real_pwrite(descriptor, data, length, offset);
    unsigned long number = next_call();
    ssize_t wrote = real_pwrite(descriptor, data, length, offset);
    int saved = errno;
    if (wrote > 0) record_write(number, descriptor, offset, data, (size_t)wrote);
    done();
    errno = saved;
    return wrote;
}

ssize_t pwrite(int descriptor, const void *data, size_t length, off_t offset) { resolve_all(); return traced_pwrite(descriptor, data, length, offset); }
ssize_t pwrite64(int descriptor, const void *data, size_t length, off_t offset) { resolve_all(); return traced_pwrite(descriptor, data, length, offset); }

static void *gather(const struct iovec *vectors, int count, size_t limit) {
    unsigned char *bytes = malloc(limit ? limit : 1), *cursor = bytes;
    size_t left = limit;
    for (int index = 0; index < count && left > 0 && bytes; index++) {
        size_t take = vectors[index].iov_len < left ? vectors[index].iov_len : left;
        memcpy(cursor, vectors[index].iov_base, take);
        cursor += take;
        left -= take;
    }
    return bytes;
}

ssize_t writev(int descriptor, const struct iovec *vectors, int count) {
    resolve_all();
    if (descriptor == STDOUT_FILENO) {
        ssize_t wrote = real_writev(descriptor, vectors, count);
        if (wrote > 0) {
            void *bytes = gather(vectors, count, (size_t)wrote);
            acknowledge(bytes, wrote);
            free(bytes);
        }
        return wrote;
    }
    if (!descriptor_is_traced(descriptor)) return real_writev(descriptor, vectors, count);
    unsigned long number = next_call();
    ssize_t wrote = real_writev(descriptor, vectors, count);
    int saved = errno;
    if (wrote > 0) {
        void *bytes = gather(vectors, count, (size_t)wrote);
        record_write(number, descriptor, (int64_t)lseek(descriptor, 0, SEEK_CUR) - wrote, bytes, (size_t)wrote);
        free(bytes);
    }
    done();
    errno = saved;
    return wrote;
}

ssize_t pwritev(int descriptor, const struct iovec *vectors, int count, off_t offset) {
    resolve_all();
    if (!descriptor_is_traced(descriptor)) return real_pwritev(descriptor, vectors, count, offset);
    unsigned long number = next_call();
    ssize_t wrote = real_pwritev(descriptor, vectors, count, offset);
    int saved = errno;
    if (wrote > 0) {
        void *bytes = gather(vectors, count, (size_t)wrote);
        record_write(number, descriptor, offset, bytes, (size_t)wrote);
        free(bytes);
    }
    done();
    errno = saved;
    return wrote;
}

ssize_t pwritev64(int descriptor, const struct iovec *vectors, int count, off_t offset) { resolve_all(); return pwritev(descriptor, vectors, count, offset); }

// Records what a copy put in `descriptor` at `offset`, read back from the file.
static void record_copied(unsigned long number, int descriptor, off_t offset, ssize_t length) {
    if (length <= 0) return;
    void *bytes = malloc((size_t)length);
    if (bytes == NULL) return;
    ssize_t got = pread(descriptor, bytes, (size_t)length, offset);
    if (got > 0) record_write(number, descriptor, offset, bytes, (size_t)got);
    free(bytes);
}

ssize_t copy_file_range(int in, off_t *in_offset, int out, off_t *out_offset, size_t length, unsigned int flags) {
    resolve_all();
    if (!descriptor_is_traced(out)) return real_copy_file_range(in, in_offset, out, out_offset, length, flags);
    unsigned long number = next_call();
    off_t start = out_offset ? *out_offset : lseek(out, 0, SEEK_CUR);
    ssize_t copied = real_copy_file_range(in, in_offset, out, out_offset, length, flags);
    int saved = errno;
    record_copied(number, out, start, copied);
    done();
    errno = saved;
    return copied;
}

ssize_t sendfile(int out, int in, off_t *in_offset, size_t length) {
    resolve_all();
    if (!descriptor_is_traced(out)) return real_sendfile(out, in, in_offset, length);
    unsigned long number = next_call();
    off_t start = lseek(out, 0, SEEK_CUR);
    ssize_t copied = real_sendfile(out, in, in_offset, length);
    int saved = errno;
    record_copied(number, out, start, copied);
    done();
    errno = saved;
    return copied;
}

ssize_t sendfile64(int out, int in, off_t *in_offset, size_t length) { resolve_all(); return sendfile(out, in, in_offset, length); }

static int traced_ftruncate(int descriptor, off_t length) {
    if (!descriptor_is_traced(descriptor)) return real_ftruncate(descriptor, length);
    unsigned long number = next_call();
    int result = real_ftruncate(descriptor, length);
    int saved = errno;
    if (result == 0) emit(KIND_TRUNCATE, number, descriptor_inode[descriptor], 0, 0, (uint64_t)length, NULL, NULL, NULL, 0);
    done();
    errno = saved;
    return result;
}

int ftruncate(int descriptor, off_t length) { resolve_all(); return traced_ftruncate(descriptor, length); }
int ftruncate64(int descriptor, off_t length) { resolve_all(); return traced_ftruncate(descriptor, length); }

int truncate(const char *path, off_t length) {
    resolve_all();
    char full[PATH_MAX];
    if (!tracing() || !absolute(AT_FDCWD, path, full) || !under_root(full)) return real_truncate(path, length);
    unsigned long number = next_call();
    int result = real_truncate(path, length);
    int saved = errno;
    if (result == 0) emit(KIND_TRUNCATE, number, inode_of_path(full), 0, 0, (uint64_t)length, full, NULL, NULL, 0);
    done();
    errno = saved;
    return result;
}

int truncate64(const char *path, off_t length) { resolve_all(); return truncate(path, length); }

static int traced_fallocate(int descriptor, int mode, off_t offset, off_t length, int posix) {
    if (!descriptor_is_traced(descriptor)) {
        return posix ? real_posix_fallocate(descriptor, offset, length) : real_fallocate(descriptor, mode, offset, length);
    }
    unsigned long number = next_call();
    int result = posix ? real_posix_fallocate(descriptor, offset, length) : real_fallocate(descriptor, mode, offset, length);
    int saved = errno;
    // FALLOC_FL_KEEP_SIZE (1): the size stays, and nothing a reader sees changes.
    if (result == 0 && (posix || (mode & 1) == 0)) {
        emit(KIND_EXTEND, number, descriptor_inode[descriptor], 0, offset, (uint64_t)length, NULL, NULL, NULL, 0);
    }
    done();
    errno = saved;
    return result;
}

int fallocate(int descriptor, int mode, off_t offset, off_t length) { resolve_all(); return traced_fallocate(descriptor, mode, offset, length, 0); }
int fallocate64(int descriptor, int mode, off_t offset, off_t length) { resolve_all(); return traced_fallocate(descriptor, mode, offset, length, 0); }
int posix_fallocate(int descriptor, off_t offset, off_t length) { resolve_all(); return traced_fallocate(descriptor, 0, offset, length, 1); }
int posix_fallocate64(int descriptor, off_t offset, off_t length) { resolve_all(); return traced_fallocate(descriptor, 0, offset, length, 1); }

// --- syncing

static int traced_sync(int descriptor, int data_only) {
    long call = data_only ? SYS_fdatasync : SYS_fsync;
    if (!descriptor_is_traced(descriptor)) return (int)syscall(call, descriptor);
    unsigned long number = next_call();
    int result = (int)syscall(call, descriptor);
    int saved = errno;
    if (result == 0) {
        emit(KIND_SYNC, number, descriptor_inode[descriptor], 0, 0, (uint64_t)data_only, descriptor_directory[descriptor], NULL, NULL, 0);
    }
    done();
    errno = saved;
    return result;
}

int fsync(int descriptor) { resolve_all(); return traced_sync(descriptor, 0); }
int fdatasync(int descriptor) { resolve_all(); return traced_sync(descriptor, 1); }

void sync(void) {
    resolve_all();
    if (!tracing()) {
        syscall(SYS_sync);
        return;
    }
    unsigned long number = next_call();
    syscall(SYS_sync);
    emit(KIND_SYNC_ALL, number, 0, 0, 0, 0, NULL, NULL, NULL, 0);
    done();
}

int syncfs(int descriptor) {
    resolve_all();
    if (!tracing()) return (int)syscall(SYS_syncfs, descriptor);
    unsigned long number = next_call();
    int result = (int)syscall(SYS_syncfs, descriptor);
    int saved = errno;
    if (result == 0) emit(KIND_SYNC_ALL, number, 0, 0, 0, 0, NULL, NULL, NULL, 0);
    done();
    errno = saved;
    return result;
}

// --- names

static int traced_rename(int from_directory, const char *from, int to_directory, const char *to, unsigned int flags, int kind) {
    char source[PATH_MAX], target[PATH_MAX];
    int traced_call = tracing() && absolute(from_directory, from, source) && absolute(to_directory, to, target)
        && (under_root(source) || under_root(target));
    if (!traced_call) {
        if (kind == 0) return real_rename(from, to);
        if (kind == 1) return real_renameat(from_directory, from, to_directory, to);
        return real_renameat2(from_directory, from, to_directory, to, flags);
    }
    unsigned long number = next_call();
    uint64_t moved = inode_of_path(source), replaced = inode_of_path(target);
    int result = kind == 0   ? real_rename(from, to)
                 : kind == 1 ? real_renameat(from_directory, from, to_directory, to)
                             : real_renameat2(from_directory, from, to_directory, to, flags);
    int saved = errno;
    if (result == 0) emit(KIND_RENAME, number, moved, replaced, 0, 0, source, target, NULL, 0);
    done();
    errno = saved;
    return result;
}

int rename(const char *from, const char *to) { resolve_all(); return traced_rename(AT_FDCWD, from, AT_FDCWD, to, 0, 0); }
int renameat(int from_directory, const char *from, int to_directory, const char *to) {
    resolve_all();
    return traced_rename(from_directory, from, to_directory, to, 0, 1);
}
int renameat2(int from_directory, const char *from, int to_directory, const char *to, unsigned int flags) {
    resolve_all();
    return traced_rename(from_directory, from, to_directory, to, flags, 2);
}

static int traced_unlink(int directory, const char *path, int flags, int kind) {
    char full[PATH_MAX];
    if (!tracing() || !absolute(directory, path, full) || !under_root(full)) {
        if (kind == 0) return real_unlink(path);
        if (kind == 1) return real_unlinkat(directory, path, flags);
        return real_rmdir(path);
    }
    unsigned long number = next_call();
    uint64_t inode = inode_of_path(full);
    int result = kind == 0 ? real_unlink(path) : kind == 1 ? real_unlinkat(directory, path, flags) : real_rmdir(path);
    int saved = errno;
    int removes_directory = kind == 2 || (kind == 1 && (flags & AT_REMOVEDIR));
    if (result == 0) emit(removes_directory ? KIND_RMDIR : KIND_UNLINK, number, inode, 0, 0, 0, full, NULL, NULL, 0);
    done();
    errno = saved;
    return result;
}

int unlink(const char *path) { resolve_all(); return traced_unlink(AT_FDCWD, path, 0, 0); }
int unlinkat(int directory, const char *path, int flags) { resolve_all(); return traced_unlink(directory, path, flags, 1); }
int rmdir(const char *path) { resolve_all(); return traced_unlink(AT_FDCWD, path, 0, 2); }

static int traced_link(int from_directory, const char *from, int to_directory, const char *to, int flags, int at) {
    char source[PATH_MAX], target[PATH_MAX];
    if (!tracing() || !absolute(from_directory, from, source) || !absolute(to_directory, to, target) || !under_root(target)) {
        return at ? real_linkat(from_directory, from, to_directory, to, flags) : real_link(from, to);
    }
    unsigned long number = next_call();
    int result = at ? real_linkat(from_directory, from, to_directory, to, flags) : real_link(from, to);
    int saved = errno;
    if (result == 0) emit(KIND_LINK, number, inode_of_path(target), 0, 0, 0, source, target, NULL, 0);
    done();
    errno = saved;
    return result;
}

int link(const char *from, const char *to) { resolve_all(); return traced_link(AT_FDCWD, from, AT_FDCWD, to, 0, 0); }
int linkat(int from_directory, const char *from, int to_directory, const char *to, int flags) {
    resolve_all();
    return traced_link(from_directory, from, to_directory, to, flags, 1);
}

static int traced_mkdir(int directory, const char *path, mode_t mode, int at) {
    char full[PATH_MAX];
    if (!tracing() || !absolute(directory, path, full) || !under_root(full)) {
        return at ? real_mkdirat(directory, path, mode) : real_mkdir(path, mode);
    }
    unsigned long number = next_call();
    int result = at ? real_mkdirat(directory, path, mode) : real_mkdir(path, mode);
    int saved = errno;
    if (result == 0) emit(KIND_MKDIR, number, inode_of_path(full), 0, 0, 0, full, NULL, NULL, 0);
    done();
    errno = saved;
    return result;
}

int mkdir(const char *path, mode_t mode) { resolve_all(); return traced_mkdir(AT_FDCWD, path, mode, 0); }
int mkdirat(int directory, const char *path, mode_t mode) { resolve_all(); return traced_mkdir(directory, path, mode, 1); }

// --- mapped writes: libgit2's indexer writes a fetched or repacked pack through a shared mapping

static void *traced_mmap(void *address, size_t length, int protection, int flags, int descriptor, off_t offset) {
    void *mapped = real_mmap(address, length, protection, flags, descriptor, offset);
    if (mapped != MAP_FAILED && records_reads && descriptor_is_traced(descriptor)) {
        pthread_mutex_lock(&lock);
        emit(KIND_MAP, sequence, descriptor_inode[descriptor], 0, offset, length, NULL, NULL, NULL, 0);
        done();
    }
    if (mapped == MAP_FAILED || !descriptor_is_traced(descriptor) || !(protection & PROT_WRITE) || !(flags & MAP_SHARED)) return mapped;
    pthread_mutex_lock(&lock);
    for (int index = 0; index < 64; index++) {
        if (mappings[index].address == NULL) {
            mappings[index] = (Mapping){mapped, length, descriptor_inode[descriptor], offset};
            break;
        }
    }
    done();
    return mapped;
}

void *mmap(void *address, size_t length, int protection, int flags, int descriptor, off_t offset) {
    resolve_all();
    return traced_mmap(address, length, protection, flags, descriptor, offset);
}
void *mmap64(void *address, size_t length, int protection, int flags, int descriptor, off_t offset) {
    resolve_all();
    return traced_mmap(address, length, protection, flags, descriptor, offset);
}

static Mapping *mapping_at(void *address) {
    for (int index = 0; index < 64; index++) {
        if (mappings[index].address != NULL && mappings[index].address == address) return &mappings[index];
    }
    return NULL;
}

int msync(void *address, size_t length, int flags) {
    resolve_all();
    if (!tracing()) return real_msync(address, length, flags);
    pthread_mutex_lock(&lock);
    Mapping *mapping = mapping_at(address);
    done();
    if (mapping == NULL) return real_msync(address, length, flags);
    unsigned long number = next_call();
    emit(KIND_WRITE, number, mapping->inode, 0, mapping->offset, mapping->length, NULL, NULL, mapping->address, mapping->length);
    int result = real_msync(address, length, flags);
    if (result == 0 && (flags & MS_SYNC)) emit(KIND_SYNC, number, mapping->inode, 0, 0, 1, NULL, NULL, NULL, 0);
    done();
    return result;
}

int munmap(void *address, size_t length) {
    resolve_all();
    if (!tracing()) return real_munmap(address, length);
    pthread_mutex_lock(&lock);
    Mapping *mapping = mapping_at(address);
    done();
    if (mapping == NULL) return real_munmap(address, length);
    unsigned long number = next_call();
    emit(KIND_WRITE, number, mapping->inode, 0, mapping->offset, mapping->length, NULL, NULL, mapping->address, mapping->length);
    mapping->address = NULL;
    int result = real_munmap(address, length);
    done();
    return result;
}

// --- reading, recorded only with TRUCE_TRACE_READS: what a command reads, for tests that count its work

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static DIR *(*real_opendir)(const char *);

static void record_read(int descriptor, ssize_t length) {
    if (!records_reads || length <= 0 || !descriptor_is_traced(descriptor)) return;
    pthread_mutex_lock(&lock);
    emit(KIND_READ, sequence, descriptor_inode[descriptor], 0, -1, (uint64_t)length, NULL, NULL, NULL, 0);
    done();
}

ssize_t read(int descriptor, void *buffer, size_t length) {
    if (real_read == NULL) real_read = dlsym(RTLD_NEXT, "read");
    ssize_t result = real_read(descriptor, buffer, length);
    record_read(descriptor, result);
    return result;
}

ssize_t __read_chk(int descriptor, void *buffer, size_t length, size_t size) {
    (void)size;
    return read(descriptor, buffer, length);
}

ssize_t pread(int descriptor, void *buffer, size_t length, off_t offset) {
    if (real_pread == NULL) real_pread = dlsym(RTLD_NEXT, "pread");
    ssize_t result = real_pread(descriptor, buffer, length, offset);
    record_read(descriptor, result);
    return result;
}

ssize_t pread64(int descriptor, void *buffer, size_t length, off_t offset) { return pread(descriptor, buffer, length, offset); }

ssize_t readv(int descriptor, const struct iovec *vectors, int count) {
    if (real_readv == NULL) real_readv = dlsym(RTLD_NEXT, "readv");
    ssize_t result = real_readv(descriptor, vectors, count);
    record_read(descriptor, result);
    return result;
}

DIR *opendir(const char *path) {
    if (real_opendir == NULL) real_opendir = dlsym(RTLD_NEXT, "opendir");
    DIR *directory = real_opendir(path);
    char full[PATH_MAX];
    if (directory != NULL && records_reads && tracing() && absolute(AT_FDCWD, path, full) && under_root(full)) {
        pthread_mutex_lock(&lock);
        emit(KIND_LIST, sequence, 0, 0, 0, 0, full, NULL, NULL, 0);
        done();
    }
    return directory;
}
