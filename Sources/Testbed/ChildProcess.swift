import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn, its stdin fed and its stdout and stderr read through pipes.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to close every inherited descriptor,
/// and reads past its buffer while it does (swift-corelibs-foundation issue 5472): a test process with a
/// thousand or so descriptors open crashed there. Here the child closes them itself (`closefrom` as a spawn
/// action), and every pipe is made close-on-exec, so no other child can hold one open.
enum ChildProcess {
    /// Runs `executable` with `arguments` and `environment` (the whole of it) in `directory`, feeding `input` to
    /// its stdin; kills it with SIGKILL if it runs past `deadline` seconds.
    static func run(
        _ executable: String, _ arguments: [String], input: Data, environment: [String: String], directory: String?,
        deadline: TimeInterval
    ) throws -> ProcessResult {
        let stdin = try Pipe(), stdout = try Pipe(), stderr = try Pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        if let closeFrom = LibC.closeFrom { _ = closeFrom(&actions, 3) }
        if let directory {
            guard let changeDirectory = LibC.changeDirectory else { throw ChildProcessError("cannot spawn in \(directory)") }
            _ = changeDirectory(&actions, directory)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        startAsFromAShell(&attributes)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        guard code == 0 else {
            for descriptor in [stdin.write, stdout.read, stderr.read] { close(descriptor) }
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(code)))")
        }
        let (out, err) = exchange(input: input, stdin: stdin.write, stdout: stdout.read, stderr: stderr.read, pid: pid, deadline: deadline)
        return ProcessResult(status: waitForExit(pid), stdout: out, stderr: err)
    }

    /// Makes a child spawned with `attributes` start as from a shell: no signal blocked (a test thread may block
    /// some) and none ignored (the test process ignores SIGPIPE, and a git writing to a closed pipe must die of it).
    static func startAsFromAShell(_ attributes: inout posix_spawnattr_t) {
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        for signal in 1..<32 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&signals, Int32(signal)) }
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    /// Writes `input` and reads both outputs until they end, at once, so no full pipe can block the child;
    /// SIGKILLs the child once `deadline` seconds have passed. Closes the three descriptors.
    private static func exchange(
        input: Data, stdin: Int32, stdout: Int32, stderr: Int32, pid: pid_t, deadline: TimeInterval
    ) -> (Data, Data) {
        var outputs = [stdout: Data(), stderr: Data()]
        var open: Set<Int32> = [stdout, stderr]
        var unwritten = input[...]
        var writing: Int32? = stdin
        // Before a close below: once closed, the number may be another thread's descriptor.
        _ = fcntl(stdin, F_SETFL, fcntl(stdin, F_GETFL) | O_NONBLOCK)
        if unwritten.isEmpty {
            close(stdin)
            writing = nil
        }
        let end = Date(timeIntervalSinceNow: deadline)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var killed = false
        while !open.isEmpty || writing != nil {
            let remaining = end.timeIntervalSinceNow
            if remaining <= 0 && !killed {
                killed = true
                FileHandle.standardError.write(Data("test support: killing \(pid) after \(Int(deadline)) s\n".utf8))
                kill(pid, SIGKILL)
            }
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if let writing { polled.append(pollfd(fd: writing, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&polled, nfds_t(polled.count), remaining > 0 ? Int32(min(remaining, 1) * 1000) : 1000)
            if ready < 0 && errno != EINTR { break }
            for entry in polled where entry.revents != 0 {
                if entry.fd == writing {
                    let written = unwritten.withUnsafeBytes { Glibc.write(entry.fd, $0.baseAddress, $0.count) }
                    if written > 0 { unwritten = unwritten.dropFirst(written) }
                    // Done, or the child closed its stdin (EPIPE): either way nothing more goes in.
                    if unwritten.isEmpty || (written < 0 && errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        writing = nil
                    }
                } else {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(entry.fd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        outputs[entry.fd]!.append(contentsOf: buffer[..<count])
                    } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                        close(entry.fd)
                        open.remove(entry.fd)
                    }
                }
            }
        }
        return (outputs[stdout]!, outputs[stderr]!)
    }

    /// The child's exit status as `Process.terminationStatus` gives it: the exit code, or the signal that ended it.
    private static func waitForExit(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
    }

    /// Both ends of a pipe, close-on-exec so that only the child they are handed to (by dup2) inherits one.
    private struct Pipe {
        let read: Int32
        let write: Int32

        init() throws {
            var descriptors: [Int32] = [-1, -1]
            guard let pipe2 = LibC.pipe2, pipe2(&descriptors, O_CLOEXEC) == 0 else {
                throw ChildProcessError("cannot make a pipe: \(String(cString: strerror(errno)))")
            }
            (read, write) = (descriptors[0], descriptors[1])
        }
    }

    /// glibc functions its headers declare only under _GNU_SOURCE, which Swift's Glibc module does not set.
    enum LibC {
        nonisolated(unsafe) private static let handle = dlopen(nil, RTLD_NOW)
        nonisolated(unsafe) static let pipe2 = unsafeBitCast(
            dlsym(handle, "pipe2"), to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)?.self)
        /// glibc 2.34 and later.
        nonisolated(unsafe) static let closeFrom = unsafeBitCast(
            dlsym(handle, "posix_spawn_file_actions_addclosefrom_np"),
            to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)?.self)
        nonisolated(unsafe) static let changeDirectory = unsafeBitCast(
            dlsym(handle, "posix_spawn_file_actions_addchdir_np"),
            to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)?.self)
    }
}

/// Why a child process could not be started, or did not do what it was started for.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
