import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key the interactive resolver reads: a character, or one of the keys terminals send as escape sequences.
enum Key: Equatable, Sendable {
    case character(Character)
    case control(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, tab, backspace
    /// The window changed size (SIGWINCH), or no key came before the timeout: draw again.
    case redraw
    /// Standard input ended.
    case endOfInput

    /// The key for `bytes`, which are one key as a terminal sends it (`ESC [ A`, a UTF-8 character, a control byte).
    static func parse(_ bytes: [UInt8]) -> Key? {
        guard let first = bytes.first else { return nil }
        switch bytes {
        case [0x1B]: return .escape
        case [0x0D], [0x0A]: return .enter
        case [0x09]: return .tab
        case [0x7F], [0x08]: return .backspace
        case [0x1B, 0x5B, 0x41], [0x1B, 0x4F, 0x41]: return .up
        case [0x1B, 0x5B, 0x42], [0x1B, 0x4F, 0x42]: return .down
        case [0x1B, 0x5B, 0x43], [0x1B, 0x4F, 0x43]: return .right
        case [0x1B, 0x5B, 0x44], [0x1B, 0x4F, 0x44]: return .left
        case [0x1B, 0x5B, 0x48], [0x1B, 0x4F, 0x48], [0x1B, 0x5B, 0x31, 0x7E], [0x1B, 0x5B, 0x37, 0x7E]: return .home
        case [0x1B, 0x5B, 0x46], [0x1B, 0x4F, 0x46], [0x1B, 0x5B, 0x34, 0x7E], [0x1B, 0x5B, 0x38, 0x7E]: return .end
        case [0x1B, 0x5B, 0x35, 0x7E]: return .pageUp
        case [0x1B, 0x5B, 0x36, 0x7E]: return .pageDown
        default: break
        }
        if first == 0x1B { return nil }
        if first < 0x20 { return .control(Character(Unicode.Scalar(first + 0x60))) }
        guard let text = String(validating: bytes, as: UTF8.self), let character = text.first, text.count == 1 else { return nil }
        return .character(character)
    }
}

/// Reads keys from the terminal in raw mode, keeping what one `read` brought beyond the first key (keys typed fast,
/// a paste) for the next calls, and turns a window change into a `.redraw`.
final class KeyReader {
    let terminal: Terminal
    private var pending: [UInt8] = []

    init(terminal: Terminal) { self.terminal = terminal }

    /// The next key; `.redraw` when the window changed size while waiting.
    func next() -> Key {
        while true {
            if !pending.isEmpty {
                let bytes = Self.firstKey(of: pending)
                pending.removeFirst(bytes.count)
                if let key = Key.parse(bytes) { return key }
                continue
            }
            if terminal.takeResize() { return .redraw }
            var descriptor = pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready < 0 {
                if errno == EINTR { continue }
                return .endOfInput
            }
            if ready == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { read(terminal.input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            if count <= 0 { return .endOfInput }
            pending = Array(buffer[..<count])
        }
    }

    /// The bytes of the first key in `bytes`: an escape sequence, one UTF-8 character, or one byte.
    static func firstKey(of bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.first else { return [] }
        if first == 0x1B, bytes.count >= 3, bytes[1] == 0x5B || bytes[1] == 0x4F {
            var end = 2
            while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
            return Array(bytes[...min(end, bytes.count - 1)])
        }
        let length = first < 0x80 ? 1 : first < 0xE0 ? 2 : first < 0xF0 ? 3 : 4
        return Array(bytes.prefix(length))
    }
}
