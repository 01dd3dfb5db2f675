internal import CSodium

/// Key material in memory libsodium guards: kept out of swap, fenced by guard pages, wiped when released.
///
/// Secrets never live in a Swift `Array`, whose storage may be copied and
/// freed without being wiped; this class owns one `sodium_malloc` region and
/// hands it out only inside `withBytes`.
package final class SecretBytes: @unchecked Sendable {
    let count: Int
    private let region: UnsafeMutablePointer<UInt8>

    /// `count` bytes filled by `fill`, which writes all of them.
    init(count: Int, fill: (UnsafeMutablePointer<UInt8>) -> Void) {
        Sodium.ready()
        guard let raw = sodium_malloc(max(count, 1)) else { fatalError("sodium_malloc(\(count)) failed: out of memory") }
        self.count = count
        region = raw.bindMemory(to: UInt8.self, capacity: max(count, 1))
        fill(region)
    }

    /// A copy of `bytes`; the caller wipes its own copy if it should not outlive this one.
    package convenience init(copying bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        self.init(count: array.count) { $0.update(from: array, count: array.count) }
    }

    /// `count` random bytes.
    package convenience init(random count: Int) {
        self.init(count: count) { randombytes_buf($0, count) }
    }

    deinit { sodium_free(region) }

    func withBytes<Value>(_ body: (UnsafePointer<UInt8>) throws -> Value) rethrows -> Value {
        try body(UnsafePointer(region))
    }

    /// The bytes as an array: only to write them, sealed, somewhere else.
    package var exposed: [UInt8] { Array(UnsafeBufferPointer(start: region, count: count)) }

    /// Compares in constant time.
    package func isEqual(to other: SecretBytes) -> Bool {
        count == other.count && sodium_memcmp(region, other.region, count) == 0
    }
}
