import Foundation

/// A server (or agent) the test started, stopped by its pid when the value goes or `stop` is called.
///
/// Started with posix_spawn, not Foundation's Process: sshd closes every inherited descriptor at start, which
/// Foundation takes for an exit and answers with a blocking wait4 that stalls every other child's bookkeeping.
public final class ServerProcess: @unchecked Sendable {
    public let name: String
    public let pid: pid_t
    private let log: String
    private let lock = NSLock()
    private var exited = false

    /// Starts `executable`; fails with the Debian package to install when it is missing.
    public init(
        _ name: String, executable: String, package: String, arguments: [String], environment: [String: String] = [:],
        log: String
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ServerError("\(executable) is missing: install the Debian package \(package) (.ci/run does)")
        }
        self.name = name
        self.log = log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // A server outlives the run that started it: it must not hold another child's pipe open all that while.
        if let closeFrom = ChildProcess.LibC.closeFrom { _ = closeFrom(&actions, 3) }
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // A test thread may block signals, and a spawned child inherits the mask: without this SIGTERM would not stop it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        ChildProcess.startAsFromAShell(&attributes)
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard code == 0 else { throw ServerError("cannot start \(executable): errno \(code)") }
        pid = child
    }

    /// True until the process exited (and was reaped here).
    public var isRunning: Bool {
        lock.withLock {
            if exited { return false }
            var status: Int32 = 0
            // ECHILD: something else (Foundation's child bookkeeping) reaped it first.
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped == -1 && errno == ECHILD) { exited = true }
            return !exited
        }
    }

    /// What the server printed so far, for failure messages.
    public var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL if it is still there after a few seconds.
    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if !waitUntil(seconds: 5, { !self.isRunning }) { kill(pid, SIGKILL) }
        _ = waitUntil(seconds: 5) { !self.isRunning }
    }

    deinit { stop() }

    /// Waits until something accepts connections on 127.0.0.1:`port`; throws with the server's output when it does not.
    public func waitForPort(_ port: Int, seconds: Double = 20) throws {
        let ready = waitUntil(seconds: seconds) { !self.isRunning || canConnect(port: port) }
        guard ready, isRunning else {
            throw ServerError("\(name) did not listen on 127.0.0.1:\(port) within \(seconds) s: \(output)")
        }
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
@discardableResult
public func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's pick, so parallel tests do not collide).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerError("socket failed: errno \(errno)") }
    defer { close(fd) }
    var address = loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw ServerError("bind failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// True when a TCP connection to 127.0.0.1:`port` succeeds.
public func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// Starts a server on a fresh port, retrying with another port when one was taken between the pick and the bind.
public func startOnFreePort(_ start: (Int) throws -> ServerProcess) throws -> (ServerProcess, Int) {
    var lastError: Error = ServerError("no attempt")
    for _ in 0..<3 {
        let port = try freeLoopbackPort()
        do {
            let server = try start(port)
            try server.waitForPort(port)
            return (server, port)
        } catch let error as ServerError where !error.description.contains("is missing") {
            lastError = error
        }
    }
    throw lastError
}

/// Runs a setup command (ssh-keygen, openssl, git), throwing with its output when it fails or is missing.
public func runTool(_ executable: String, package: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw ServerError("\(executable) is missing: install the Debian package \(package) (.ci/run does)")
    }
    let result = try run(executable, arguments, environment: environment)
    guard result.status == 0 else { throw ServerError("\(executable) \(arguments.joined(separator: " ")) failed: \(result.errorOutput)") }
    return result
}
