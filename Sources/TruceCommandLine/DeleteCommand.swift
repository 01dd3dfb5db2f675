import Truce

struct DeleteCommand: Command {
    static let name = "delete"
    static let synopsis = "truce delete DOC [--device NAME] [--base VERSION] [--date ISO8601 [--allow-future-date]]"
    static let summary = "write a deletion version of DOC and print its id"
    static let options: [Option] = [.device, .base, .date, .allowFutureDate, .json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let (device, date) = try (invocation.device(), invocation.date())
        let store = try invocation.openStore()
        let base = try invocation.arguments.value("--base").map { try store.version($0, of: key).id }
        let result = try store.delete(key, device: device, base: base, date: date, allowingFutureDate: invocation.allowsFutureDate)
        try SaveCommand.report(result, invocation)
        return .success
    }
}
