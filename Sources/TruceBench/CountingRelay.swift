import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What some work moved through the relay (both ways) and how long it took.
struct WireMeasurement {
    var bytes = 0
    var seconds = 0.0

    static func + (a: WireMeasurement, b: WireMeasurement) -> WireMeasurement {
        WireMeasurement(bytes: a.bytes + b.bytes, seconds: a.seconds + b.seconds)
    }
}

/// A TCP relay on 127.0.0.1 in front of a server on 127.0.0.1, counting every byte that crosses it each way.
///
/// Truce's own traffic counts cover pack data only, and `git` prints none; the
/// relay sees what both really move, ref advertisements and commands
/// included, so Truce and plain git are measured by the same instrument.
final class CountingRelay: @unchecked Sendable {
    let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var bytes = 0
    private var openConnections = 0

    init(forwardingTo target: Int) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 64) == 0 else {
            let code = errno
            if listener >= 0 { close(listener) }
            throw RelayError("cannot listen on 127.0.0.1: errno \(code)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { self.acceptConnections() }
    }

    /// Stops accepting; connections still open finish on their own.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Runs `body` and returns the bytes it moved through the relay and the seconds it took.
    func measure(_ body: () throws -> Void) throws -> WireMeasurement {
        lock.withLock { bytes = 0 }
        let elapsed = try seconds(body)
        // A client that exits may leave its last bytes in flight to the relay: wait until every connection closed.
        let deadline = Date().addingTimeInterval(10)
        while lock.withLock({ openConnections }) > 0 {
            guard Date() < deadline else { throw RelayError("a connection through the relay stayed open 10 s after the client finished") }
            usleep(5_000)
        }
        return WireMeasurement(bytes: lock.withLock { bytes }, seconds: elapsed)
    }

    /// `measure` for work that awaits.
    func measureAwaiting(_ body: () async throws -> Void) async throws -> WireMeasurement {
        lock.withLock { bytes = 0 }
        let elapsed = try await secondsAwaiting(body)
        let deadline = Date().addingTimeInterval(10)
        while lock.withLock({ openConnections }) > 0 {
            guard Date() < deadline else { throw RelayError("a connection through the relay stayed open 10 s after the client finished") }
            usleep(5_000)
        }
        return WireMeasurement(bytes: lock.withLock { bytes }, seconds: elapsed)
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard server >= 0, connected == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            lock.withLock { openConnections += 1 }
            let halves = Atomic(0)
            let finished: @Sendable () -> Void = {
                guard halves.add() == 1 else { return }
                close(client)
                close(server)
                self.lock.withLock { self.openConnections -= 1 }
            }
            Thread.detachNewThread {
                self.pump(from: client, to: server)
                finished()
            }
            Thread.detachNewThread {
                self.pump(from: server, to: client)
                finished()
            }
        }
    }

    /// Copies until `source` ends, then passes the end on, so each side sees the other's shutdown.
    private func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        copying: while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            lock.withLock { bytes += count }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + written, count - written, Int32(MSG_NOSIGNAL)) }
                if step < 0 && errno == EINTR { continue }
                guard step > 0 else { break copying }
                written += step
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

struct RelayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
