import Foundation

/// A directory of bare repositories served over one transport on 127.0.0.1, and the URL of each.
public protocol GitHubServer: AnyObject {
    /// The URL a client uses for the bare repository `name` (created with `makeHub`).
    func url(of name: String) -> String
    var root: String { get }
}

extension GitHubServer {
    /// Creates a plain bare repository `name` (`git init --bare`) in the served directory.
    public func makeHub(_ name: String = "hub.git") throws -> String {
        _ = try runTool("/usr/bin/git", package: "git", ["init", "-q", "--bare", root + "/" + name])
        // git http-backend and git daemon refuse pushes into a repository they were not told may take them.
        _ = try runTool("/usr/bin/git", package: "git", ["-C", root + "/" + name, "config", "http.receivepack", "true"])
        return url(of: name)
    }
}

/// `git daemon --enable=receive-pack` on 127.0.0.1: the git:// transport; without `allowingPush`, a daemon that only serves fetches.
/// With `tracingPacketsTo`, every pkt-line its upload-pack and receive-pack read and write is logged to that file
/// (`GIT_TRACE_PACKET`): what a client really said, in git's own words.
public final class GitDaemon: GitHubServer, @unchecked Sendable {
    public let directory = TemporaryDirectory("truce-daemon")
    public var root: String { directory.file("repos") }
    public let server: ServerProcess
    public let port: Int

    public init(allowingPush: Bool = true, tracingPacketsTo trace: String? = nil) throws {
        let root = directory.file("repos"), log = directory.file("daemon.log")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        (server, port) = try startOnFreePort { port in
            try ServerProcess(
                "git daemon", executable: "/usr/lib/git-core/git-daemon", package: "git",
                arguments: [
                    "--reuseaddr", allowingPush ? "--enable=receive-pack" : "--forbid-override=receive-pack", "--export-all", "--base-path=\(root)",
                    "--listen=127.0.0.1", "--port=\(port)", root,
                ], environment: trace.map { ["GIT_TRACE_PACKET": $0] } ?? [:], log: log)
        }
    }

    public func url(of name: String) -> String { "git://127.0.0.1:\(port)/\(name)" }
}

/// lighttpd running `git http-backend` as CGI, with Basic auth (user `truce`, password `secret-pw`), over http or https;
/// without `requiringPassword`, open to anyone (the benchmark's byte counts, where a 401 round trip would only add noise).
/// `tracingPacketsTo` logs the backend's pkt-lines as `GitDaemon`'s does.
public final class HTTPGitServer: GitHubServer, @unchecked Sendable {
    public static let user = "truce", password = "secret-pw"
    public let directory = TemporaryDirectory("truce-http")
    public var root: String { directory.file("repos") }
    public let server: ServerProcess
    public let port: Int
    public let tls: Bool
    /// With TLS: the PEM file of the test CA that signed the server's certificate for `localhost`.
    public let caFile: String?

    public init(tls: Bool, requiringPassword: Bool = true, tracingPacketsTo trace: String? = nil) throws {
        self.tls = tls
        let dir = directory.path, root = directory.file("repos")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try "\(Self.user):\(Self.password)\n".write(toFile: dir + "/users", atomically: true, encoding: .utf8)
        var modules = #""mod_alias", "mod_cgi", "mod_setenv", "mod_auth", "mod_authn_file""#
        var tlsConfig = ""
        if tls {
            caFile = try Self.makeCertificates(in: dir)
            modules += #", "mod_openssl""#
            tlsConfig = "ssl.engine = \"enable\"\nssl.pemfile = \"\(dir)/server.pem\"\nssl.privkey = \"\(dir)/server.key\"\n"
            guard FileManager.default.fileExists(atPath: "/usr/lib/lighttpd/mod_openssl.so") else {
                throw ServerError("lighttpd's mod_openssl is missing: install the Debian package lighttpd-mod-openssl (.ci/run does)")
            }
        } else {
            caFile = nil
        }
        let authentication =
            requiringPassword
            ? """
            auth.backend = "plain"
            auth.backend.plain.userfile = "\(dir)/users"
            auth.require = ("/git" => ("method" => "basic", "realm" => "truce", "require" => "valid-user"))
            """ : ""
        (server, port) = try startOnFreePort { port in
            let config = """
                server.modules = (\(modules))
                server.document-root = "\(root)"
                server.bind = "127.0.0.1"
                server.port = \(port)
                server.errorlog = "\(dir)/error.log"
                alias.url = ("/git" => "/usr/lib/git-core/git-http-backend")
                cgi.assign = ("" => "")
                setenv.add-environment = ("GIT_PROJECT_ROOT" => "\(root)", "GIT_HTTP_EXPORT_ALL" => ""\(trace.map { #", "GIT_TRACE_PACKET" => "\#($0)""# } ?? ""))
                \(authentication)
                \(tlsConfig)
                """
            try config.write(toFile: dir + "/lighttpd.conf", atomically: true, encoding: .utf8)
            return try ServerProcess(
                "lighttpd", executable: "/usr/sbin/lighttpd", package: "lighttpd",
                arguments: ["-D", "-f", dir + "/lighttpd.conf"], log: dir + "/lighttpd.log")
        }
    }

    /// http://127.0.0.1:PORT/git/NAME, or https://localhost:PORT/git/NAME (libgit2 checks the name, and the certificate is for localhost).
    public func url(of name: String) -> String { tls ? "https://localhost:\(port)/git/\(name)" : "http://127.0.0.1:\(port)/git/\(name)" }

    /// The URL with the user and `password` in it.
    public func url(of name: String, password: String) -> String {
        url(of: name).replacingOccurrences(of: "://", with: "://\(Self.user):\(password)@")
    }

    /// A test CA and a certificate for `localhost` it signed; returns the CA's PEM file.
    private static func makeCertificates(in dir: String) throws -> String {
        let openssl = "/usr/bin/openssl"
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        _ = try runTool(
            openssl, package: "openssl",
            ["req", "-x509"] + ec + [
                "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem",
                "-days", "2", "-subj", "/CN=Truce Test CA",
            ])
        _ = try runTool(
            openssl, package: "openssl",
            ["req"] + ec + [
                "-keyout", dir + "/server.key", "-out", dir + "/server.csr",
                "-subj", "/CN=localhost",
            ])
        try "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n".write(toFile: dir + "/ext", atomically: true, encoding: .utf8)
        _ = try runTool(
            openssl, package: "openssl",
            [
                "x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
                "-CAcreateserial", "-out", dir + "/server.pem", "-days", "2", "-extfile", dir + "/ext",
            ])
        return dir + "/ca.pem"
    }
}

/// OpenSSH's sshd on 127.0.0.1 with a generated host key, and a client HOME whose ~/.ssh has a generated key it accepts.
public final class SSHGitServer: GitHubServer, @unchecked Sendable {
    public let directory = TemporaryDirectory("truce-sshd")
    public var root: String { directory.file("repos") }
    /// The HOME to give the truce process: `.ssh/id_ed25519` and (with `trustHost`) `.ssh/known_hosts`.
    public var home: String { directory.file("home") }
    public var clientKey: String { home + "/.ssh/id_ed25519" }
    public let server: ServerProcess
    public let port: Int
    private let hostPublicKey: String

    public init() throws {
        let dir = directory.path, root = directory.file("repos"), ssh = directory.file("home") + "/.ssh"
        for path in [root, ssh] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        // sshd refuses to start without its privilege-separation directory.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let keygen = "/usr/bin/ssh-keygen"
        _ = try runTool(keygen, package: "openssh-client", ["-q", "-t", "ed25519", "-N", "", "-f", dir + "/host_key"])
        _ = try runTool(keygen, package: "openssh-client", ["-q", "-t", "ed25519", "-N", "", "-C", "truce-test", "-f", ssh + "/id_ed25519"])
        try FileManager.default.copyItem(atPath: ssh + "/id_ed25519.pub", toPath: dir + "/authorized_keys")
        hostPublicKey = try String(contentsOfFile: dir + "/host_key.pub", encoding: .utf8)
        (server, port) = try startOnFreePort { port in
            let config = """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(dir)/host_key
                PidFile none
                AuthorizedKeysFile \(dir)/authorized_keys
                StrictModes no
                PubkeyAuthentication yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PermitRootLogin yes
                UsePAM no
                """
            try config.write(toFile: dir + "/sshd_config", atomically: true, encoding: .utf8)
            return try ServerProcess(
                "sshd", executable: "/usr/sbin/sshd", package: "openssh-server",
                arguments: ["-D", "-e", "-f", dir + "/sshd_config"], log: dir + "/sshd.log")
        }
    }

    /// Writes the server's host key to the client's `~/.ssh/known_hosts`, as `ssh-keyscan -p PORT 127.0.0.1` would.
    public func trustHost() throws {
        let fields = hostPublicKey.split(separator: " ")
        try "[127.0.0.1]:\(port) \(fields[0]) \(fields[1])\n".write(toFile: home + "/.ssh/known_hosts", atomically: true, encoding: .utf8)
    }

    /// ssh://USER@127.0.0.1:PORT/ABSOLUTE-PATH, USER being the local login (sshd runs the git commands as that user).
    public func url(of name: String) -> String { "ssh://\(NSUserName())@127.0.0.1:\(port)\(root)/\(name)" }
}

/// `ssh-agent -D -a SOCKET` holding `key`; `environment` points a client at it.
public final class SSHAgent: @unchecked Sendable {
    public let directory = TemporaryDirectory("truce-agent")
    public var socket: String { directory.file("agent.sock") }
    public let agent: ServerProcess

    public init(adding key: String) throws {
        agent = try ServerProcess(
            "ssh-agent", executable: "/usr/bin/ssh-agent", package: "openssh-client",
            arguments: ["-D", "-a", directory.file("agent.sock")], log: directory.file("agent.log"))
        let socket = directory.file("agent.sock")
        guard waitUntil(seconds: 20, { FileManager.default.fileExists(atPath: socket) }) else {
            throw ServerError("ssh-agent made no socket within 20 s: \(agent.output)")
        }
        _ = try runTool("/usr/bin/ssh-add", package: "openssh-client", ["-q", key], environment: ["SSH_AUTH_SOCK": socket])
    }

    public var environment: [String: String] { ["SSH_AUTH_SOCK": socket] }
}
