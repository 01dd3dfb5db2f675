import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An ssh-agent at a socket the caller names (`TransferEnvironment.sshAgentSocket`), spoken to in OpenSSH's agent
/// protocol (draft-miller-ssh-agent): list its keys, sign with one.
///
/// libssh2 finds its agent through the process's `SSH_AUTH_SOCK` alone, so
/// the transfer offers each of the agent's keys itself, as a libgit2 custom
/// ssh credential whose signature this client asks the agent for.
package struct SSHAgentClient: Sendable {
    /// A key the agent holds: its public key blob (the ssh wire form) and its comment.
    package struct Identity: Sendable, Equatable {
        package let publicKey: [UInt8]
        package let comment: String
    }

    package let socket: String

    package init(socket: String) { self.socket = socket }

    /// Message numbers of the protocol.
    private enum Message {
        static let failure: UInt8 = 5
        static let requestIdentities: UInt8 = 11
        static let identitiesAnswer: UInt8 = 12
        static let signRequest: UInt8 = 13
        static let signResponse: UInt8 = 14
        static let rsaSHA256: UInt32 = 2
        static let rsaSHA512: UInt32 = 4
    }

    /// The keys the agent holds, in its order; nil when it cannot be reached or answers something else.
    package func identities() -> [Identity]? {
        guard let answer = exchange([Message.requestIdentities]), answer.first == Message.identitiesAnswer else { return nil }
        var reader = WireReader(answer.dropFirst())
        guard let count = reader.uint32() else { return nil }
        var found: [Identity] = []
        for _ in 0..<count {
            guard let key = reader.string(), let comment = reader.string() else { return nil }
            found.append(Identity(publicKey: key, comment: String(decoding: comment, as: UTF8.self)))
        }
        return found
    }

    /// The agent's signature of `data` with `identity`, without its algorithm name (the form libssh2 wants from a
    /// signing callback); nil when the agent refuses or cannot be reached.
    ///
    /// `data` is what ssh signs to authenticate (RFC 4252, section 7), whose
    /// algorithm name says which signature an RSA key must make.
    package func sign(_ data: [UInt8], with identity: Identity) -> [UInt8]? {
        var request = [Message.signRequest]
        WireReader.append(string: identity.publicKey, to: &request)
        WireReader.append(string: data, to: &request)
        WireReader.append(uint32: Self.flags(forSigning: data), to: &request)
        guard let answer = exchange(request), answer.first == Message.signResponse else { return nil }
        var reader = WireReader(answer.dropFirst())
        guard let blob = reader.string() else { return nil }
        var signature = WireReader(blob[...])
        guard signature.string() != nil, let bytes = signature.string() else { return nil }
        return bytes
    }

    /// The agent's flags for the algorithm the data to sign names: rsa-sha2-256 or -512 for an RSA key, none otherwise.
    static func flags(forSigning data: [UInt8]) -> UInt32 {
        var reader = WireReader(data[...])
        // Session id, SSH_MSG_USERAUTH_REQUEST, user, service, "publickey", TRUE, then the algorithm's name.
        guard reader.string() != nil, reader.byte() != nil, reader.string() != nil, reader.string() != nil, reader.string() != nil,
            reader.byte() != nil, let algorithm = reader.string()
        else { return 0 }
        switch String(decoding: algorithm, as: UTF8.self) {
        case "rsa-sha2-256": return Message.rsaSHA256
        case "rsa-sha2-512": return Message.rsaSHA512
        default: return 0
        }
    }

    /// Sends one request and returns the agent's answer (without its length), nil on any failure.
    private func exchange(_ request: [UInt8]) -> [UInt8]? {
        guard let descriptor = connect() else { return nil }
        defer { close(descriptor) }
        var framed: [UInt8] = []
        WireReader.append(string: request, to: &framed)
        guard writeAll(framed, to: descriptor), let header = read(4, from: descriptor) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        // An agent's answers are small: a list of keys, a signature.
        guard length > 0, length <= 256 * 1024 else { return nil }
        return read(length, from: descriptor)
    }

    private func connect() -> Int32? {
        #if canImport(Glibc)
            let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = Darwin.socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return nil }
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path)
            buffer[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                #else
                    Darwin.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                #endif
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// An agent that went away must fail the write, not kill the process with SIGPIPE.
    #if canImport(Glibc)
        private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
        private static let noSignal: Int32 = 0
    #endif

    private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Self.noSignal) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private func read(_ count: Int, from descriptor: Int32) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes[offset...].withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            offset += got
        }
        return bytes
    }
}

/// ssh's wire encoding (RFC 4251, section 5): big-endian `uint32`s and length-prefixed strings.
struct WireReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func byte() -> UInt8? { bytes.popFirst() }

    mutating func uint32() -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        defer { bytes = bytes.dropFirst(4) }
        return bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func string() -> [UInt8]? {
        guard let length = uint32(), bytes.count >= Int(length) else { return nil }
        defer { bytes = bytes.dropFirst(Int(length)) }
        return Array(bytes.prefix(Int(length)))
    }

    static func append(uint32 value: UInt32, to bytes: inout [UInt8]) {
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) }
    }

    static func append(string: [UInt8], to bytes: inout [UInt8]) {
        append(uint32: UInt32(string.count), to: &bytes)
        bytes += string
    }
}
