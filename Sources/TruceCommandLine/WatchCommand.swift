import Foundation
import Synchronization
import Truce

struct WatchCommand: Command {
    static let name = "watch"
    static let synopsis = "truce watch [--json] [--exclude-author NAME]"
    static let summary = "print every save, deletion and resolution as it happens, from any writer, until interrupted"
    static let options: [Option] = [
        ChangesCommand.excludeAuthor,
        .flag("--json", help: "print one JSON object per line instead of text"),
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 0)
        let store = try invocation.openStore()
        let excluded = invocation.arguments.value("--exclude-author").map { Array($0.utf8) }
        let (output, json) = (invocation.output, invocation.wantsJSON)
        let interruption = Interruption()
        let events = store.events
        let printing = Task {
            for await event in events where Array(event.author.utf8) != excluded {
                if json { try? output.json(event, oneLine: true) } else { output.out(line(for: event)) }
            }
        }
        // The store must outlive the wait: releasing it ends its events.
        await interruption.wait()
        withExtendedLifetime(store) {}
        printing.cancel()
        return .success
    }

    /// `save  <version>  <date>  <author>  settled → in conflict  <key>`: the key last, as `changes` prints it.
    static func line(for event: DocumentStateChange) -> String {
        "\(event.kind.rawValue)  \(event.version.hex)  \(ISO8601.format(event.change.date))  \(escapingControlCharacters(event.author))  "
            + "\(event.previous) → \(event.current)  \(escapingControlCharacters(event.key.rawValue))"
    }

    /// `text` with each control character written as `\u{1B}`, so a name a replica sent cannot move the cursor or fake a line.
    static func escapingControlCharacters(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}

/// Turns SIGINT and SIGTERM into the end of `wait()`, so `watch` returns and exits 0 instead of being killed.
///
/// Awaited, not waited for on a semaphore: the command runs on Swift's cooperative pool, which the printing task shares.
private struct Interruption {
    private let signal = Signal()
    private let sources: [any DispatchSourceSignal]

    init() {
        let signal = signal
        sources = [SIGINT, SIGTERM].map { number in
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { signal.received() }
            source.resume()
            return source
        }
    }

    func wait() async {
        await signal.wait()
        for source in sources { source.cancel() }
    }

    /// The one-time event of a signal arriving, awaited by one waiter.
    private final class Signal: Sendable {
        private let state = Mutex<(received: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func received() {
            let waiter = state.withLock { state in
                state.received = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let received = state.withLock { state in
                    if !state.received { state.waiter = continuation }
                    return state.received
                }
                if received { continuation.resume() }
            }
        }
    }
}
