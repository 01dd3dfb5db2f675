import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The terminal the interactive resolver draws on: raw mode, the alternate screen, its size, and putting everything
/// back as it was on exit, on SIGINT, SIGTERM and SIGHUP, and on error.
///
/// Written on termios and ANSI escape sequences rather than ncurses: the
/// resolver needs raw keys, a few cursor and erase sequences and SGR colour,
/// which every terminal since the VT100 understands. ncurses would add a
/// second system library to a package whose one system dependency is
/// libgit2; much of its C API is variadic or macros, which Swift cannot call;
/// it keeps global state that is not thread-safe; and its terminfo lookup
/// would make what the resolver draws depend on files outside the package.
final class Terminal: @unchecked Sendable {
    let input: Int32
    let output: Int32
    /// Whether to draw colour and attributes: not when `NO_COLOR` is set or `TERM` is `dumb`.
    let colour: Bool
    private let lock = NSLock()
    private var isRaw = false

    /// The terminal on standard input and output; nil when either is not one.
    init?(environment: [String: String] = ProcessInfo.processInfo.environment, input: Int32 = 0, output: Int32 = 1) {
        guard isatty(input) == 1, isatty(output) == 1 else { return nil }
        self.input = input
        self.output = output
        colour = Self.wantsColour(environment)
    }

    /// No colour when `NO_COLOR` is set to anything but the empty string (no-color.org), or `TERM` is `dumb` or unset.
    static func wantsColour(_ environment: [String: String]) -> Bool {
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return false }
        guard let term = environment["TERM"], !term.isEmpty, term != "dumb" else { return false }
        return true
    }

    /// Columns and rows, as the kernel knows them (`TIOCGWINSZ`).
    var size: (width: Int, height: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Raw keys (no echo, no line editing, no signals from keys, no flow control), the alternate screen, no cursor;
    /// from then on SIGINT, SIGTERM and SIGHUP put the terminal back before the process ends by them.
    func enter() throws {
        try lock.withLock {
            guard !isRaw else { return }
            var original = termios()
            guard tcgetattr(input, &original) == 0 else {
                throw InputError("cannot read the terminal's settings: \(String(cString: strerror(errno)))")
            }
            var raw = original
            raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
            raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR)
            withUnsafeMutableBytes(of: &raw.c_cc) { control in
                control[Int(VMIN)] = 1
                control[Int(VTIME)] = 0
            }
            // The handlers read what they restore from here: set it before they can run.
            TerminalSignals.remember(original, input: input, output: output)
            guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else {
                TerminalSignals.forget()
                throw InputError("cannot put the terminal in raw mode: \(String(cString: strerror(errno)))")
            }
            isRaw = true
        }
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    /// Puts the terminal back as `enter()` found it; safe to call more than once.
    func restore() {
        let wasRaw: Bool = lock.withLock {
            defer { isRaw = false }
            return isRaw
        }
        guard wasRaw else { return }
        TerminalSignals.restoreNow()
        TerminalSignals.forget()
    }

    /// Leaves raw mode for a program that uses the terminal itself (an editor, a merge tool), then comes back.
    func suspended<T>(_ body: () throws -> T) throws -> T {
        restore()
        defer { try? enter() }
        return try body()
    }

    /// True once after each SIGWINCH: the screen must be drawn again at the new size.
    func takeResize() -> Bool { TerminalSignals.takeWindowChange() }

    /// Writes `text` to the terminal as it is: the caller escaped what came from other replicas.
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { systemWrite(output, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// Draws `lines` over the whole screen: each line erased to its end, nothing left below.
    func draw(_ lines: [String]) {
        write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }
}

/// The signal handlers of the terminal: SIGINT, SIGTERM and SIGHUP restore the saved settings and end the process by
/// the same signal; SIGWINCH notes that the window changed.
///
/// A signal handler may only use async-signal-safe calls (`tcsetattr`,
/// `write`, `signal`, `raise`) and plain memory, so what it restores is kept
/// in module-level storage written before the handlers can run.
enum TerminalSignals {
    nonisolated(unsafe) private static var saved = termios()
    nonisolated(unsafe) private static var descriptors: (input: Int32, output: Int32) = (0, 1)
    nonisolated(unsafe) private static var active: Int32 = 0
    nonisolated(unsafe) private static var windowChanged: Int32 = 0
    nonisolated(unsafe) private static var installed = false

    static func remember(_ settings: termios, input: Int32, output: Int32) {
        saved = settings
        descriptors = (input, output)
        active = 1
        guard !installed else { return }
        installed = true
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number) { number in
                TerminalSignals.restoreNow()
                signal(number, SIG_DFL)
                raise(number)
            }
        }
        signal(SIGWINCH) { _ in TerminalSignals.windowChanged = 1 }
    }

    static func forget() { active = 0 }

    /// Leaves the alternate screen, shows the cursor, resets attributes and restores the saved settings.
    static func restoreNow() {
        guard active == 1 else { return }
        active = 0
        let leave: StaticString = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
        _ = systemWrite(descriptors.output, leave.utf8Start, leave.utf8CodeUnitCount)
        tcsetattr(descriptors.input, TCSAFLUSH, &saved)
    }

    static func takeWindowChange() -> Bool {
        defer { windowChanged = 0 }
        return windowChanged == 1
    }
}

/// The system's `write(2)`.
func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
