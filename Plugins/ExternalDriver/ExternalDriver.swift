import Foundation
import TruceCore

/// A git external merge driver: `[merge "NAME"] driver = CMD %O %A %B %L %P %S %X %Y` in the store's own config.
///
/// The command runs as `/bin/sh -c` in a fresh private directory, where `%O`,
/// `%A` and `%B` are the files `base`, `current` and `other`; `%L` is the
/// marker size, `%P` is `document` plus the key's extension, and `%S`, `%X`,
/// `%Y` are the short version ids of base, current and other. No text from a
/// key or a document ever reaches the shell. The driver writes its result to
/// `%A` and exits 0; any other ending (a non-zero exit as git means it, a
/// crash, the timeout, no result in `%A`) passes to the chain's fallback with
/// the reason, and nothing is written. N heads are folded pairwise, current first.
///
/// Options: `resolver.external.timeout` (seconds, default 30) for every driver,
/// `resolver.<name>.timeout` for one, which is also the store's timeout for the
/// driver, so all of its pairwise runs share it; `resolver.<name>.markerSize`
/// (`%L`, default 7). The driver's process is awaited, never waited for on a
/// parked thread, and killed with its process group at the deadline or when
/// the resolving task is cancelled.
public struct ExternalDriver: Resolver {
    /// The driver's name: `merge=<name>` in `info/attributes`, `[merge "<name>"]` in config.
    public let name: String
    /// The command line from `merge.<name>.driver`, placeholders unexpanded.
    public let command: String
    /// Seconds the driver may run before its process group is killed, unless `resolver.<name>.timeout` says otherwise.
    public let timeout: Double

    public var definition: String? { "merge.\(name).driver = \(command) (the store's config)" }

    /// A driver called `name` that runs `command`.
    public init(name: String, command: String, timeout: Double = 30) {
        self.name = name
        self.command = command
        self.timeout = timeout
    }

    /// Makes the driver `merge.<name>.driver` defines in the store's own config, nil when it defines none.
    ///
    /// Only the store's config file is read, never a global or system one and
    /// never anything a sync brings: a driver is a command this machine runs.
    public static let provider: ResolverProvider = { (name: String, localConfig: [String: String]) throws(TruceError) -> (any Resolver)? in
        guard let command = localConfig["merge.\(name).driver"] else { return nil }
        guard !command.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidConfiguration("merge.\(name).driver is empty: give the command that merges %O, %A and %B")
        }
        let shared = ResolverOptions(resolverName: "external", values: ["timeout": localConfig["resolver.external.timeout"]].compactMapValues { $0 })
        return ExternalDriver(name: name, command: command, timeout: try shared.number("timeout", default: 30, in: timeoutRange))
    }

    static let timeoutRange = DocumentStore.resolverTimeoutRange

    public func validate(options: ResolverOptions) throws {
        _ = try settings(options)
    }

    /// The driver's own timeout: the store's deadline for it is the same, so the driver kills its process in time and says so.
    public var defaultTimeout: Double { timeout }

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let (timeout, markerSize) = try settings(context.options)
        guard var result = conflict.current.content else { return .pass(reason: "the current version is a deletion") }
        var merged = [conflict.current.version.id]
        for other in conflict.conflicts {
            guard let theirs = other.content else { return .pass(reason: "version \(other.version.id.short) is a deletion") }
            // As git does for an add/add conflict, no base is an empty base.
            let base = try conflict.mergeBase(of: other.version.id, and: merged)
            let command = DriverCommand(
                key: conflict.key, markerSize: markerSize, baseLabel: base?.version.id.short ?? "empty",
                currentLabel: conflict.current.version.id.short, otherLabel: other.version.id.short)
            let run = DriverRun(driver: name, command: command, template: self.command, timeout: timeout)
            switch try await run.run(base: base?.content ?? Data(), current: result, other: theirs, deadline: context.deadline) {
            case .merged(let content): result = content
            case .unmerged(let reason): return .pass(reason: "merging version \(other.version.id.short): \(reason)")
            }
            merged.append(other.version.id)
        }
        return .resolved(content: result)
    }

    func settings(_ options: ResolverOptions) throws(TruceError) -> (timeout: Double, markerSize: Int) {
        (try options.number("timeout", default: timeout, in: Self.timeoutRange), try options.integer("markerSize", default: 7, in: 1...1024))
    }
}
