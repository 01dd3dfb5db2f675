import Foundation

/// Re-implements git's credential helper input and output (git-credential INPUT/OUTPUT FORMAT): byte-compatible with git, listed in TruceGit/README.md.
///
/// git's credential helper protocol (`git credential fill`, `approve`, `reject`), so a user's configured helper works unchanged.
///
/// This is the one place Truce lets the user's git configuration in: which
/// helper stores passwords is the user's choice, not the store's. git never
/// prompts here (`GIT_TERMINAL_PROMPT=0`), and its messages stay out of Truce's
/// one error line. git runs in the environment the caller hands down
/// (`TransferEnvironment.credentialHelperEnvironment`), never the process's
/// own: its `HOME` says whose `~/.gitconfig` names the helper.
package enum GitCredentialHelper {
    package struct Credential {
        package let user: String
        package let password: String
        package var url: RemoteURL?
    }

    /// How long a helper may take before Truce gives up on it.
    package static let timeout: TimeInterval = 30

    /// The helper's user name and password for `url`, nil when it has none (or git is not installed); git runs with
    /// `environment`.
    package static func fill(for url: RemoteURL, user: String?, environment: [String: String]) -> Credential? {
        var request = description(of: url)
        if let user = user ?? url.user { request += "username=\(user)\n" }
        guard let answer = git(["credential", "fill"], input: request + "\n", environment: environment) else { return nil }
        var fields: [String: String] = [:]
        for line in answer.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let name = fields["username"], let password = fields["password"] else { return nil }
        return Credential(user: name, password: password, url: url)
    }

    /// Tells the helpers that `credential` worked (`approve`) or was refused (`reject`); nothing without an
    /// `environment` for git (then no helper gave it).
    package static func run(_ action: String, _ credential: Credential, environment: [String: String]?) {
        guard let url = credential.url, let environment else { return }
        _ = git(
            ["credential", action], input: description(of: url) + "username=\(credential.user)\npassword=\(credential.password)\n\n",
            environment: environment)
    }

    private static func description(of url: RemoteURL) -> String {
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        return "protocol=\(url.scheme)\nhost=\(url.hostAndPort)\n" + (path.isEmpty ? "" : "path=\(path)\n")
    }

    /// Runs git in `environment` (never prompting) with `input` on stdin and returns its stdout, nil when it fails, is
    /// missing or takes too long.
    private static func git(_ arguments: [String], input: String, environment: [String: String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        var environment = environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        // Written before git starts (it is far smaller than a pipe's buffer): a git that exits early cannot SIGPIPE us.
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
        do { try process.run() } catch { return nil }
        // Read while git runs so a large answer cannot block it.
        nonisolated(unsafe) var output = Data()
        let reader = DispatchGroup()
        reader.enter()
        DispatchQueue.global().async {
            output = stdout.fileHandleForReading.readDataToEndOfFile()
            reader.leave()
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            _ = finished.wait(timeout: .now() + 5)
            return nil
        }
        _ = reader.wait(timeout: .now() + 5)
        return process.terminationStatus == 0 ? String(decoding: output, as: UTF8.self) : nil
    }
}
