import Foundation
import TestSupport
import Testing

/// A tmux server of its own (its own socket, no user config) with one window running one shell script: how the
/// tests drive the terminal resolver as a person at a terminal would. The server is killed by its socket at the end,
/// and the socket, in the test's temporary directory, goes with it.
final class Tmux: Sendable {
    let directory = TemporaryDirectory("truce-tmux")
    var socket: String { directory.file("socket") }

    /// Starts `script` (shell text) in a `width`×`height` window; the script's exit status lands in `status`, and the
    /// pane stays (`remain-on-exit`) so that its last screen can be read.
    init(_ script: String, width: Int = 100, height: Int = 30, environment: [String: String] = [:]) throws {
        let exports = environment.sorted { $0.key < $1.key }.map { "export \($0.key)=\(Self.quote($0.value))" }
        let body = (["cd \(Self.quote(directory.path))"] + exports + [script, "echo $? > \(Self.quote(directory.file("status")))"])
        directory.write(Data(body.joined(separator: "\n").utf8), to: "script.sh")
        // The server's config, read before the window opens: no user config, and the pane kept when the script ends.
        directory.write(Data("set -g remain-on-exit on\n".utf8), to: "tmux.conf")
        let started = try tmux(
            "-f", directory.file("tmux.conf"), "new-session", "-d", "-x", "\(width)", "-y", "\(height)",
            "sh \(Self.quote(directory.file("script.sh")))")
        try #require(started.status == 0, "tmux did not start: \(started.errorOutput)")
    }

    /// Ends what still runs in the pane, by its process group (a program that ignores SIGHUP would outlive the
    /// server), then the server, by its socket.
    deinit {
        let pids = (try? tmux("list-panes", "-a", "-F", "#{pane_pid}"))?.output.split(separator: "\n") ?? []
        for pid in pids { if let pid = Int32(pid) { kill(-pid, SIGKILL) } }
        _ = try? tmux("kill-server")
    }

    /// Sends keys as tmux names them (`Enter`, `Escape`, `C-c`, or plain characters).
    func send(_ keys: String...) throws {
        let result = try tmux(["send-keys", "-t", "0"] + keys)
        try #require(result.status == 0, "send-keys failed: \(result.errorOutput)")
    }

    /// Types `text` literally.
    func type(_ text: String) throws {
        _ = try tmux("send-keys", "-t", "0", "-l", text)
    }

    /// The screen as text; with `escapes`, with the SGR sequences of its attributes; with `history`, with the lines
    /// that scrolled off its top before it.
    func screen(escapes: Bool = false, history: Bool = false) throws -> String {
        try tmux(["capture-pane", "-p", "-t", "0"] + (escapes ? ["-e"] : []) + (history ? ["-S", "-"] : [])).output
    }

    /// Waits until the screen satisfies `condition`, and returns it.
    @discardableResult
    func wait(
        for what: String, timeout: Double = 15, sourceLocation: SourceLocation = #_sourceLocation, _ condition: (String) -> Bool
    ) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try screen()
            if condition(last) { return last }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("timed out waiting for \(what); the screen was:\n\(last)", sourceLocation: sourceLocation)
        throw TimedOut()
    }

    /// Waits until the screen holds `text`, and returns it.
    @discardableResult
    func wait(forText text: String, timeout: Double = 15, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try wait(for: "'\(text)'", timeout: timeout, sourceLocation: sourceLocation) { $0.contains(text) }
    }

    /// The script's exit status, once it has one.
    func status(timeout: Double = 15) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: directory.file("status"), encoding: .utf8),
                let status = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                return status
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the script did not finish; the screen was:\n\((try? screen()) ?? "")")
        throw TimedOut()
    }

    func resize(width: Int, height: Int) throws {
        let result = try tmux("resize-window", "-t", "0", "-x", "\(width)", "-y", "\(height)")
        try #require(result.status == 0, "resize-window failed: \(result.errorOutput)")
    }

    private func tmux(_ arguments: String...) throws -> Spawned { try tmux(arguments) }
    private func tmux(_ arguments: [String]) throws -> Spawned { try Self.spawn(["tmux", "-S", socket] + arguments) }

    /// Runs a program and waits for it with `posix_spawnp` and `waitpid`, its output through files.
    ///
    /// Not `Process`, so that the child starts with no signal blocked and
    /// every signal at its default, whatever the test's thread had.
    static func spawn(_ arguments: [String]) throws -> Spawned {
        let files = TemporaryDirectory("truce-spawn")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, files.file("out"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, files.file("err"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // A test's thread blocks signals, and a child inherits that: a tmux server that never hears SIGCHLD never ends.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child = pid_t()
        let spawned = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, environ)
        try #require(spawned == 0, "cannot run \(arguments[0]): \(spawned)")
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let read = { (name: String) in (try? String(contentsOfFile: files.file(name), encoding: .utf8)) ?? "" }
        return Spawned(status: (status >> 8) & 0xFF, output: read("out"), errorOutput: read("err"))
    }

    /// What a spawned program left: its exit status and what it printed.
    struct Spawned {
        let status: Int32
        let output: String
        let errorOutput: String
    }

    /// `text` as one shell word.
    static func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    struct TimedOut: Error {}
}

/// Every ref and every object of a store: equal before and after only when nothing was written.
func refsAndObjects(ofStore path: String) throws -> String {
    let refs = try git("-C", path, "for-each-ref", "--format=%(objectname) %(refname)").output
    let objects = try git("-C", path, "cat-file", "--batch-all-objects", "--batch-check").output
    return refs + "\n" + objects
}
