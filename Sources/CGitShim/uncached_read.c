/* A read of one object from an object database's backends that leaves libgit2's object cache alone.
 *
 * libgit2 stores every object `git_odb_read` returns in the repository's cache. A sync's checks read each incoming
 * commit and tree once or twice and never again, so at a million documents the cache is always full, and each
 * eviction scans the cache's table from its start: about a quarter of the checks' time. This asks the backends in
 * libgit2's order, as `git_odb_read` does, and verifies the object's id as libgit2's strict verification does. */
#include "CGitShim.h"
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <string.h>

int truce_odb_read_uncached(void **data, size_t *length, int *type, git_odb_backend **owner, git_odb *odb, const void *raw_id) {
    const git_oid *id = raw_id;
    git_object_t found_type = GIT_OBJECT_INVALID;
    *data = NULL;
    *owner = NULL;
    size_t count = git_odb_num_backends(odb);
    for (size_t position = 0; position < count; position++) {
        git_odb_backend *backend = NULL;
        if (git_odb_get_backend(&backend, odb, position) < 0) return GIT_ERROR;
        if (!backend->read) continue;
        int error = backend->read(data, length, &found_type, backend, id);
        *type = found_type;
        if (error == GIT_PASSTHROUGH || error == GIT_ENOTFOUND) continue;
        if (error < 0) return error;
        git_oid hashed;
        if ((error = git_odb_hash(&hashed, *data, *length, found_type)) < 0 || !git_oid_equal(&hashed, id)) {
            git_odb_backend_data_free(backend, *data);
            *data = NULL;
            if (error < 0) return error;
            char expected[GIT_OID_HEXSZ + 1], actual[GIT_OID_HEXSZ + 1];
            git_oid_tostr(expected, sizeof expected, id);
            git_oid_tostr(actual, sizeof actual, &hashed);
            git_error_set(GIT_ERROR_ODB, "object hash mismatch - expected %s but got %s", expected, actual);
            return GIT_EMISMATCH;
        }
        *owner = backend;
        return 0;
    }
    return GIT_ENOTFOUND;
}

void truce_odb_data_free(git_odb_backend *owner, void *data) {
    if (owner) git_odb_backend_data_free(owner, data);
}
