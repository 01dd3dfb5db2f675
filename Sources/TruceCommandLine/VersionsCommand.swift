import Truce

struct VersionsCommand: Command {
    static let name = "versions"
    static let synopsis = "truce versions DOC"
    static let summary = "show the current version, the conflict versions and their base"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let versions = try invocation.openStore().versions(of: key)
        guard versions.current != nil else { throw TruceError.documentNotFound(key) }
        if invocation.wantsJSON {
            try invocation.output.json(VersionsReport(versions))
        } else {
            invocation.output.out(lines(for: versions).joined(separator: "\n"))
        }
        return .success
    }

    static func lines(for versions: DocumentVersions) -> [String] {
        var lines = ["\(versions.key): \(versions.state)"]
        lines += versions.current.map { ["current   " + describe($0)] } ?? []
        lines += versions.conflicts.map { "conflict  " + describe($0) }
        lines += versions.base.map { ["base      " + describe($0)] } ?? []
        return lines
    }
}

/// The JSON shape of `versions` and of each entry of `status`.
struct VersionsReport: Encodable {
    let document: DocumentKey
    let state: DocumentState
    let current: Version?
    let conflicts: [Version]
    let base: Version?

    init(_ versions: DocumentVersions) {
        (document, state, current, conflicts, base) = (versions.key, versions.state, versions.current, versions.conflicts, versions.base)
    }
}
