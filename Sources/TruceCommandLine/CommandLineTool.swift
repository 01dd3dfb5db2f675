import Foundation
import Truce

/// The process exit codes: 0 done, 1 a person is needed, 2 bad input, 3 a store or remote failure; `merge-file` exits with its number of conflicts, like git.
struct ExitCode: Equatable {
    let rawValue: Int32

    static let success = ExitCode(rawValue: 0)
    /// A person is needed: conflicts remain.
    static let needsPerson = ExitCode(rawValue: 1)
    static let badInput = ExitCode(rawValue: 2)
    static let storeFailure = ExitCode(rawValue: 3)
}

/// What every command gets: its parsed words, the way to the store, the resolvers it may run and the process's
/// environment variables.
struct Invocation {
    let arguments: Arguments
    let output: Output
    let registry: ResolverRegistry
    /// The process's environment variables, read once, where the command starts (`CommandLineTool.run`): what a
    /// command takes from them (`$TRUCE_STORE`, `$TRUCE_DEVICE`, what a sync uses to reach a hub) is read here.
    let environment: [String: String]

    var wantsJSON: Bool { arguments.has("--json") }

    /// The store directory: `--store`, then `$TRUCE_STORE`, then `./.truce`; an empty `--store` is bad usage.
    func storePath() throws -> String {
        if let given = arguments.value("--store") {
            guard !given.isEmpty else { throw UsageError("--store needs a directory, not an empty name") }
            return given
        }
        return environment["TRUCE_STORE"].flatMap { $0.isEmpty ? nil : $0 } ?? ".truce"
    }

    /// The store, with the tool's resolvers, and its device from `--device` or `$TRUCE_DEVICE` when given.
    ///
    /// The command line is where the environment is read: a test may name a
    /// fault point in `$TRUCE_TEST_PAUSE_AT`, where the process then pauses so
    /// that the test can kill it exactly there.
    /// The store the command works on. A command is one process for one operation: its saves go straight into git
    /// (one pass, one handle), never through the save log, which pays off only for a process that saves again and again.
    /// (The crash tests set `TRUCE_TEST_SAVE_LOG=1` to kill a process in the middle of a logged save and its landing.)
    /// Its syncs reach hubs as git does, with what the process's variables give (`SyncEnvironment.fromProcess`:
    /// `$HOME/.ssh`, `$SSH_AUTH_SOCK`, `$GIT_SSL_CAINFO`, `$TRUCE_USERNAME`/`$TRUCE_PASSWORD`, git's credential helpers).
    func openStore() throws -> DocumentStore {
        try DocumentStore.open(
            at: storePath(), device: arguments.value("--device") ?? environment["TRUCE_DEVICE"], resolvers: registry,
            savesThroughLog: environment["TRUCE_TEST_SAVE_LOG"] == "1" ? nil : false, syncEnvironment: .fromProcess(environment),
            instrumentation: StoreInstrumentation(pausingAt: environment["TRUCE_TEST_PAUSE_AT"]))
    }

    /// The one positional a command requires, named for the usage error.
    func positional(_ index: Int, _ name: String) throws -> String {
        guard index < arguments.positionals.count else { throw UsageError("missing \(name)") }
        return arguments.positionals[index]
    }

    func key(at index: Int = 0) throws -> DocumentKey { try DocumentKey(positional(index, "DOC")) }

    func rejectExtraPositionals(beyond count: Int) throws {
        if arguments.positionals.count > count {
            throw UsageError("unexpected argument '\(arguments.positionals[count])'")
        }
    }
}

/// A subcommand of `truce`: a few lines that call one library function and print its result.
protocol Command {
    static var name: String { get }
    static var synopsis: String { get }
    static var summary: String { get }
    static var options: [Option] { get }
    /// More for `truce help COMMAND`, after the options: keys, exit codes; nil for none.
    static var details: String? { get }
    /// The positionals that are file names, which may be any bytes (see `Arguments`).
    static var pathPositionals: Set<Int> { get }
    static func run(_ invocation: Invocation) async throws -> ExitCode
}

extension Command {
    static var details: String? { nil }
    static var pathPositionals: Set<Int> { [] }
    static func run(_ invocation: Invocation) async throws -> ExitCode {
        preconditionFailure("\(name) reads its own words (RawWordsCommand)")
    }
}

/// A command that reads its words itself, as the git command it stands in for reads them (`merge-file`), and
/// prints its own errors with that command's exit statuses; `options` are for `truce help` only.
protocol RawWordsCommand: Command {
    /// Runs with the words after the command's name, exactly as the system passed them.
    static func run(words: [[UInt8]], output: Output) async -> ExitCode
}

/// The `truce` command-line tool, for an app that ships its own `truce`.
public enum CommandLineTool {
    static var commands: [any Command.Type] {
        [
            InitCommand.self, SaveCommand.self, CatCommand.self, DeleteCommand.self, VersionsCommand.self,
            StatusCommand.self, LogCommand.self, ExplainCommand.self, ResolveCommand.self, ConflictsCommand.self,
            ReopenCommand.self, SyncCommand.self, ChangesCommand.self, ReviewCommand.self, WatchCommand.self, PruneCommand.self,
            MergeFileCommand.self, MergeDriverCommand.self, RerereCommand.self, HelpCommand.self,
            ImportCommand.self, ExportCommand.self, FieldsCommand.self, ReplicasCommand.self, HubCommand.self,
        ]
    }

    /// The release of Truce this tool is built on.
    public static let version = "0.2.0"

    /// Runs the tool with `arguments` (without the program name) and returns its exit code; results go to stdout.
    ///
    /// `registry` holds the resolvers the store's config may name, the built-in ones unless told otherwise; `name` is
    /// what the tool calls itself in errors, help and its version line.
    public static func run(arguments: [String], name: String = "truce", registry: ResolverRegistry = .standard) async -> Int32 {
        var output = Output.standard
        output.toolName = name
        return await run(arguments, registry: registry, output: output).rawValue
    }

    /// Runs `truce` with `words` (without the program name) and returns the exit code.
    static func run(_ words: [String], registry: ResolverRegistry = .standard, output: Output = .standard) async -> ExitCode {
        await run(bytes: words.map { Array($0.utf8) }, registry: registry, output: output)
    }

    /// Runs `truce` with the words exactly as the system passed them, which need not be UTF-8.
    static func run(bytes words: [[UInt8]], registry: ResolverRegistry = .standard, output: Output = .standard) async -> ExitCode {
        var words = words
        func text(_ word: [UInt8]) -> String { String(decoding: word, as: UTF8.self) }
        // Global options before the command are handed to the command, so `truce --store S save …` works.
        var global: [[UInt8]] = []
        while let first = words.first.map(text), first.hasPrefix("--store") || first == "--json" {
            global.append(words.removeFirst())
            if first == "--store", let value = words.first {
                global.append(value)
                words.removeFirst()
            }
        }
        guard let name = words.first.map(text) else {
            output.out(HelpCommand.overview(toolName: output.toolName))
            // Bad usage like any other: scripts reading stderr get the one line every error gives.
            output.error("missing COMMAND; see '\(output.toolName) help'")
            return .badInput
        }
        if name == "--help" || name == "-h" { return await run(bytes: [Array("help".utf8)] + words.dropFirst(), registry: registry, output: output) }
        if name == "--version" {
            output.out(output.toolName == "truce" ? "truce \(version)" : "\(output.toolName) (Truce \(version))")
            return .success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            output.error("unknown command '\(name)'; see '\(output.toolName) help'")
            return .badInput
        }
        if let raw = command as? any RawWordsCommand.Type { return await raw.run(words: Array(words.dropFirst()), output: output) }
        do {
            let arguments = try Arguments.parse(
                global + words.dropFirst(), options: command.options + [.store, .help],
                pathPositionals: command.pathPositionals, command: name)
            if arguments.has("--help") {
                output.out(HelpCommand.help(for: command, toolName: output.toolName))
                return .success
            }
            // The one reading of the process's environment for every command that takes an Invocation.
            let environment = ProcessInfo.processInfo.environment
            return try await command.run(Invocation(arguments: arguments, output: output, registry: registry, environment: environment))
        } catch let error as UsageError {
            output.error("\(name): \(error.message); see '\(output.toolName) help \(name)'")
            return .badInput
        } catch let error as TruceError {
            output.error(error.errorDescription ?? "\(error)")
            return error.isBadInput ? .badInput : .storeFailure
        } catch let error as InputError {
            output.error(error.message)
            return .badInput
        } catch let error as ResolveWithTool.ToolFailure {
            output.error(error.message)
            return .needsPerson
        } catch {
            output.error("\(error)")
            return .storeFailure
        }
    }
}

/// Input the command could not use (an unreadable file, say): exit code 2.
struct InputError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
