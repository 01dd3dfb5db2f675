import Truce

struct CatCommand: Command {
    static let name = "cat"
    static let synopsis = "truce cat DOC [--version VERSION]"
    static let summary = "print a version's content, byte for byte (default: the current version)"
    static let options: [Option] = [.value("--version", help: "the version to print (an id or a unique prefix)")]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let store = try invocation.openStore()
        let version: Version
        if let id = invocation.arguments.value("--version") {
            version = try store.version(id, of: key)
        } else {
            guard let current = try store.currentVersion(of: key) else { throw TruceError.documentNotFound(key) }
            version = current
        }
        guard let content = try store.contents(of: version) else {
            throw InputError("'\(key)' is deleted in version \(version.id.short); print an earlier one with --version")
        }
        invocation.output.raw(content)
        return .success
    }
}
