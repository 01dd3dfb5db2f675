import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a program on this process's terminal, as a shell runs one in the foreground: an editor or a merge tool.
///
/// `posix_spawn` with the standard descriptors and process group inherited
/// (a program in another group could not read the terminal), the signals
/// the resolver handles set back to their defaults, and the environment
/// given. The arguments are passed as they are: no shell reads them unless
/// the program is one.
enum AttachedProcess {
    /// Runs `arguments[0]` (looked up in `PATH` when it has no `/`) and returns its exit status; a program killed by
    /// a signal gives 128 plus its number, as a shell says.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGQUIT, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var child = pid_t()
        let status = posix_spawnp(&child, arguments[0], nil, &attributes, argv, envp)
        guard status == 0 else {
            throw InputError("cannot run \(arguments[0]): \(String(cString: strerror(status)))")
        }
        var result: Int32 = 0
        while waitpid(child, &result, 0) < 0 {
            guard errno == EINTR else { throw InputError("cannot wait for \(arguments[0]): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and friends are macros: the low seven bits are the signal, the next eight the exit status.
        let signalNumber = result & 0x7F
        return signalNumber == 0 ? (result >> 8) & 0xFF : 128 + signalNumber
    }

    /// Runs `command` with `/bin/sh -c`, as git runs a configured command: `command` is local configuration, and
    /// the values it names (file paths) reach it only as the environment variables in `variables`.
    static func shell(_ command: String, variables: [String: String]) throws -> Int32 {
        var environment = ProcessInfo.processInfo.environment
        environment.merge(variables) { $1 }
        return try run(["/bin/sh", "-c", command], environment: environment)
    }

    /// The full path of `program` found in `PATH`; nil when it is not there.
    static func find(_ program: String, in environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
