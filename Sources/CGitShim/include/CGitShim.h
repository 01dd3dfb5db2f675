#ifndef TRUCE_CGITSHIM_H
#define TRUCE_CGITSHIM_H

/* Fixed-arity wrappers for git_libgit2_opts, which is variadic and so not callable from Swift. */

/** Makes libgit2 fsync object files, refs and reflogs it writes (GIT_OPT_ENABLE_FSYNC_GITDIR). */
int truce_git_enable_fsync_gitdir(int enabled);

/** Validates every object libgit2 creates against the object database (GIT_OPT_ENABLE_STRICT_OBJECT_CREATION). */
int truce_git_enable_strict_object_creation(int enabled);

/** Makes libgit2 trust the CA certificates in `file` (PEM) for https, in place of the system bundle (GIT_OPT_SET_SSL_CERT_LOCATIONS). */
int truce_git_set_ssl_cert_file(const char *file);

#endif
