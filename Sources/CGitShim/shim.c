#include "CGitShim.h"
#include <git2.h>

int truce_git_enable_fsync_gitdir(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, enabled);
}

int truce_git_search_no_outside_config(void) {
    const git_config_level_t levels[] = {
        GIT_CONFIG_LEVEL_PROGRAMDATA, GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        int error = git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
        if (error < 0) return error;
    }
    return 0;
}

int truce_git_enable_strict_object_creation(int enabled) {
    return git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, enabled);
}

int truce_git_set_cache_max_size(size_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)bytes);
}

int truce_git_set_cache_object_limit(int type, size_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, (git_object_t)type, bytes);
}

int truce_git_set_mwindow_file_limit(size_t files) {
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_FILE_LIMIT, files);
}

int truce_git_set_mwindow_size(size_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, bytes);
}

int truce_git_set_mwindow_mapped_limit(size_t bytes) {
    return git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, bytes);
}

int truce_git_set_ssl_cert_file(const char *file) {
    return git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, file, NULL);
}
