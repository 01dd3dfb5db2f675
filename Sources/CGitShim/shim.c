#include "CGitShim.h"
#include <git2.h>

int truce_git_enable_fsync_gitdir(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, enabled);
}

int truce_git_enable_strict_object_creation(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, enabled);
}

int truce_git_set_ssl_cert_file(const char *file) {
    return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, NULL);
}
