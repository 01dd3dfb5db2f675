import Foundation
import Truce

struct SaveCommand: Command {
    static let name = "save"
    static let synopsis = "truce save DOC [FILE|-] [--device NAME] [--base VERSION] [--date ISO8601 [--allow-future-date]]"
    static let summary = "write a version of DOC from FILE (or standard input) and print its id"
    static let options: [Option] = [.device, .base, .date, .allowFutureDate, .json]
    static let pathPositionals: Set<Int> = [1]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 2)
        let key = try invocation.key()
        let content = try readInput(invocation.arguments.path(at: 1) ?? Array("-".utf8))
        let (device, date) = try (invocation.device(), invocation.date())
        let store = try invocation.openStore()
        let base = try invocation.arguments.value("--base").map { try store.version($0, of: key).id }
        let result = try store.save(content, to: key, device: device, base: base, date: date, allowingFutureDate: invocation.allowsFutureDate)
        try report(result, invocation)
        return .success
    }

    /// Prints the new version's id, and says so on stderr when the write put the document into conflict.
    static func report(_ result: SaveResult, _ invocation: Invocation) throws {
        if invocation.wantsJSON {
            try invocation.output.json(SaveReport(version: result.version, state: result.state))
            return
        }
        invocation.output.out(result.id.hex)
        if result.state == .inConflict {
            invocation.output.error("note: \(result.key) is now in conflict; see '\(invocation.output.toolName) versions \(result.key)'")
        }
    }

    /// Reads a whole file, or standard input for '-'.
    static func readInput(_ path: [UInt8]) throws -> Data {
        if path == Array("-".utf8) { return FileHandle.standardInput.readDataToEndOfFile() }
        return try readFile(bytes: path)
    }
}

struct SaveReport: Encodable {
    let version: Version
    /// nil when it could not be read after the save (see `SaveCommand.report`).
    let state: DocumentState?
}

extension Option {
    static let device = Option.value("--device", help: "who saves (default: $TRUCE_DEVICE, then the host name)")
    static let base = Option.value("--base", help: "the version this one is made from (default: the current version)")
    static let date = Option.value(
        "--date", help: "the save's date, ISO 8601 (default: now); raised to a second past its parents' and what sync brought")
    static let allowFutureDate = Option.flag("--allow-future-date", help: "save with a --date more than a day ahead of this clock")
}

extension Invocation {
    /// `--device`, then `$TRUCE_DEVICE`, then the host name (the library's `defaultDevice`).
    func device() -> String {
        arguments.value("--device") ?? environment["TRUCE_DEVICE"] ?? DocumentStore.defaultDevice
    }

    func date() throws -> Date { try date(option: "--date") ?? Date() }

    /// `--allow-future-date`: a `--date` more than a day ahead of this device's clock is saved rather than refused.
    var allowsFutureDate: Bool { arguments.has("--allow-future-date") }

    /// The ISO 8601 date given for `option`, nil when absent.
    func date(option: String) throws -> Date? {
        guard let text = arguments.value(option) else { return nil }
        guard let date = DateArgument.parse(text) else {
            throw InputError("invalid date '\(text)': expected ISO 8601 such as 2026-11-30T20:15:00Z")
        }
        return date
    }
}
