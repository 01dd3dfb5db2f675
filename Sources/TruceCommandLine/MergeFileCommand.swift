import Foundation
import Truce

/// `truce merge-file`: a drop-in for `git merge-file`, its options, its output, its messages and its exit statuses.
///
/// As git 2.39 does: the result goes into CURRENT unless `-p`; inside a
/// repository, `merge.conflictStyle` is read from its config (system, global,
/// the repository's, and `git -c`) before the options, which override it;
/// the exit status is the number of conflicts, capped at 127; a file git
/// cannot read or merge is `error: …` and 255 (nothing printed after `-q`);
/// bad usage is 129; a broken config or `--object-id` outside a repository
/// is `fatal: …` and 128. From later git: `--object-id` and
/// `--diff-algorithm` (myers, minimal or patience: libgit2 has no histogram).
struct MergeFileCommand: RawWordsCommand {
    static let name = "merge-file"
    static let synopsis = "truce merge-file [<options>] [-L <name1> [-L <orig> [-L <name2>]]] <file1> <orig-file> <file2>"
    static let summary =
        "a drop-in for 'git merge-file': merge into <file1> (or print, -p); exit status = number of conflicts (127 at most), 255 error, 129 bad usage"
    static let options: [Option] = [
        .flag("-p", "--stdout", help: "send the result to standard output instead of <file1>"),
        .flag(
            "--object-id",
            help: "the three arguments are blobs of the repository here (any revision); the result is written as a blob, its id printed"),
        .flag("--diff3", help: "show the base's lines in conflicts too"),
        .flag("--zdiff3", help: "like --diff3, with lines both sides share moved out of conflicts"),
        .flag("--ours", help: "settle conflicts with <file1>'s side"),
        .flag("--theirs", help: "settle conflicts with <file2>'s side"),
        .flag("--union", help: "settle conflicts with both sides, <file1>'s first"),
        .value("--diff-algorithm", help: "myers (default), minimal or patience"),
        .value("--marker-size", help: "conflict markers N characters long (default 7, at most 65535)"),
        .flag("-q", "--quiet", help: "print no error or warning"),
        .value("-L", help: "a label instead of a file name: for <file1>, then <orig-file>, then <file2>"),
    ]

    /// The options as git's parse-options reads them.
    private static let gitOptions: [GitStyleOptions.Option] = [
        .flag("stdout", short: "p"), .flag("object-id"), .flag("diff3"), .flag("zdiff3"), .flag("ours"), .flag("theirs"), .flag("union"),
        .value("diff-algorithm"), .value("marker-size", negatable: true), .flag("quiet", short: "q"), .value(nil, short: "L"),
    ]

    /// git's exit statuses besides the number of conflicts.
    static let errorStatus = ExitCode(rawValue: 255)
    static let fatalStatus = ExitCode(rawValue: 128)
    static let usageStatus = ExitCode(rawValue: 129)

    /// How to stop: the status, and the line git prints (nil for none).
    private struct Stop: Error {
        let status: ExitCode
        let line: String
        static func error(_ message: String) -> Stop { Stop(status: errorStatus, line: "error: " + message) }
        static func fatal(_ message: String) -> Stop { Stop(status: fatalStatus, line: "fatal: " + message) }
        static func usage(_ message: String) -> Stop { Stop(status: usageStatus, line: "truce: merge-file: \(message); see 'truce help merge-file'") }
    }

    /// The settings the words and the config give.
    private struct Settings {
        var toStandardOutput = false
        var objectIDs = false
        var quiet = false
        var options = TextMergeOptions()
        var labels: [String] = []
        var files: [[UInt8]] = []
    }

    static func run(words: [[UInt8]], output: Output) async -> ExitCode {
        if words.prefix(while: { $0 != Array("--".utf8) }).contains(where: { $0 == Array("--help".utf8) || $0 == Array("-h".utf8) }) {
            output.out(HelpCommand.help(for: self, toolName: output.toolName))
            return .success
        }
        var quiet = false
        do {
            let environment = GitEnvironment()
            let repository = try findRepository(environment)
            var settings = Settings()
            // As git: the config first, then the options over it.
            if let repository { settings.options.style = try conflictStyle(in: repository, environment) ?? .merge }
            try parse(words, into: &settings)
            quiet = settings.quiet
            return try merge(settings, repository: repository, output: output)
        } catch let stop as Stop {
            // -q silences what comes after the options, as git's freopen of stderr does; bad usage is said before.
            if !quiet || stop.status == usageStatus { output.writeError(Data((Output.escapingControls(stop.line) + "\n").utf8)) }
            return stop.status
        } catch {
            if !quiet { output.writeError(Data((Output.escapingControls("fatal: \(error)") + "\n").utf8)) }
            return fatalStatus
        }
    }

    /// The repository git would find from the current directory, nil outside one.
    private static func findRepository(_ environment: GitEnvironment) throws -> GitRepository? {
        do {
            return try GitRepository.discover(
                from: FileManager.default.currentDirectoryPath, gitDirectory: environment.gitDirectory,
                ceilingDirectories: environment.ceilingDirectories)
        } catch {
            throw Stop.fatal(error.errorDescription ?? "\(error)")
        }
    }

    /// `merge.conflictStyle` as git reads it (every file in order, then `git -c`): the last value, each one checked.
    private static func conflictStyle(in repository: GitRepository, _ environment: GitEnvironment) throws -> TextMergeOptions.ConflictStyle? {
        do { return try environment.conflictStyle(in: repository) } catch { throw Stop(status: fatalStatus, line: error.gitLines) }
    }

    private static func parse(_ words: [[UInt8]], into settings: inout Settings) throws {
        let parsed: GitStyleOptions
        do { parsed = try GitStyleOptions(words, options: gitOptions) } catch { throw Stop.usage(error.message) }
        for event in parsed.events {
            switch event {
            case .set("stdout"): settings.toStandardOutput = true
            case .unset("stdout"): settings.toStandardOutput = false
            case .set("object-id"): settings.objectIDs = true
            case .unset("object-id"): settings.objectIDs = false
            case .set("diff3"): settings.options.style = .diff3
            case .set("zdiff3"): settings.options.style = .zdiff3
            case .unset("diff3"), .unset("zdiff3"): settings.options.style = .merge
            case .set("ours"): settings.options.favor = .ours
            case .set("theirs"): settings.options.favor = .theirs
            case .set("union"): settings.options.favor = .union
            case .unset("ours"), .unset("theirs"), .unset("union"): settings.options.favor = .normal
            case .set("quiet"): settings.quiet = true
            case .unset("quiet"): settings.quiet = false
            case .unset("marker-size"): settings.options.markerSize = 0
            case .value("marker-size", let bytes):
                guard let size = strtolValue(bytes) else { throw Stop.usage("option `marker-size' expects a numerical value") }
                guard size <= TextMerge.maximumMarkerSize else {
                    throw Stop.usage("--marker-size can be at most \(TextMerge.maximumMarkerSize) (libgit2's limit)")
                }
                settings.options.markerSize = size
            case .value("diff-algorithm", let bytes):
                let text = String(decoding: bytes, as: UTF8.self).lowercased()
                if text == "histogram" {
                    throw Stop.usage("option diff-algorithm: histogram is not available (libgit2 merges with myers, minimal or patience)")
                }
                guard let algorithm = text == "default" ? .myers : TextMergeOptions.DiffAlgorithm(rawValue: text) else {
                    throw Stop.usage("option diff-algorithm accepts \"myers\", \"minimal\", \"patience\" and \"histogram\"")
                }
                settings.options.diffAlgorithm = algorithm
            case .value("L", let bytes):
                guard settings.labels.count < 3 else { throw Stop.usage("too many labels on the command line") }
                settings.labels.append(String(decoding: bytes, as: UTF8.self))
            default:
                throw Stop.usage("unexpected option")
            }
        }
        guard parsed.positionals.count == 3 else {
            throw Stop.usage("expected <file1> <orig-file> <file2>, got \(parsed.positionals.count) arguments")
        }
        settings.files = parsed.positionals
    }

    /// `bytes` read as git reads an integer option, with C's strtol: blanks and a sign before the digits, nothing
    /// after them; nil when empty, when something follows or when it does not fit.
    private static func strtolValue(_ bytes: [UInt8]) -> Int? {
        guard !bytes.isEmpty, !bytes.contains(0) else { return nil }
        return (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { text -> Int? in
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let value = strtol(text.baseAddress!, &end, 10)
            guard errno == 0, let end, end.pointee == 0 else { return nil }
            return value
        }
    }

    /// One input: an open regular file (merged region by region) or bytes.
    private enum Input {
        case file(FileHandle)
        case bytes(Data)
    }

    private static func merge(_ settings: Settings, repository: GitRepository?, output: Output) throws -> ExitCode {
        if settings.objectIDs && repository == nil { throw Stop.fatal("not a git repository (or any of the parent directories): .git") }
        let names = settings.files.map { String(decoding: $0, as: UTF8.self) }
        var inputs: [Input] = []
        for (bytes, name) in zip(settings.files, names) {
            let input = try settings.objectIDs ? blob(name, in: repository!) : read(bytes, name)
            let binary: Bool
            switch input {
            case .file(let handle): binary = try TextMerge.isBinary(file: handle)
            case .bytes(let data): binary = TextMerge.isBinary(data)
            }
            if binary { throw Stop.error("Cannot merge binary files: \(name)") }
            inputs.append(input)
        }
        var options = settings.options
        let labels = names.indices.map { $0 < settings.labels.count ? settings.labels[$0] : names[$0] }
        (options.oursLabel, options.baseLabel, options.theirsLabel) = (labels[0], labels[1], labels[2])

        var merged = Data()
        let conflicts: Int
        // Printed results go out as they are made; a result written back is held until the merge has read everything.
        let printing = settings.toStandardOutput
        func write(_ piece: Data) {
            if printing { output.raw(piece) } else { merged.append(piece) }
        }
        if case .file(let current) = inputs[0], case .file(let base) = inputs[1], case .file(let other) = inputs[2] {
            guard let count = try TextMerge.mergeFiles(base: base, ours: current, theirs: other, options: options, write: write) else {
                throw Stop.error("Cannot merge binary files: \(names[0])")
            }
            conflicts = count
        } else {
            let data = try inputs.map(contents)
            guard let result = try TextMerge.merge(base: data[1], ours: data[0], theirs: data[2], options: options) else {
                throw Stop.error("Cannot merge binary files: \(names[0])")
            }
            write(result.content)
            conflicts = result.conflictCount
        }
        if !settings.toStandardOutput {
            if settings.objectIDs {
                do { output.raw(Data((try repository!.writeBlob(merged) + "\n").utf8)) } catch { throw Stop.error("Could not write object file") }
            } else {
                try writeBack(merged, to: settings.files[0], name: names[0])
            }
        }
        return ExitCode(rawValue: Int32(min(conflicts, 127)))
    }

    /// A file as git's read_mmfile reads it, failing with its messages: regular files stay open for `mergeFiles`.
    private static func read(_ path: [UInt8], _ name: String) throws -> Input {
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        var status = stat()
        guard !path.contains(0), stat(cPath, &status) == 0 else { throw Stop.error("Could not stat \(name): \(String(cString: strerror(errno)))") }
        let descriptor = open(cPath, O_RDONLY)
        guard descriptor >= 0 else { throw Stop.error("Could not open \(name): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        if status.st_mode & S_IFMT == S_IFREG { return .file(handle) }
        // git's fopen refuses a directory (FREAD_READS_DIRECTORIES on Linux); a pipe or a device is read to its end.
        if status.st_mode & S_IFMT == S_IFDIR { throw Stop.error("Could not open \(name): \(String(cString: strerror(EISDIR)))") }
        do { return .bytes(try handle.readToEnd() ?? Data()) } catch { throw Stop.error("Could not read \(name)") }
    }

    /// A blob of the repository by revision, failing with git's messages.
    private static func blob(_ revision: String, in repository: GitRepository) throws -> Input {
        switch try repository.revision(revision) {
        case .blob(let data): return .bytes(data)
        case .notFound: throw Stop.error("object '\(revision)' does not exist")
        case .unreadableBlob(let id): throw Stop.fatal("unable to read blob object \(id)")
        }
    }

    private static func contents(_ input: Input) throws -> Data {
        switch input {
        case .bytes(let data): return data
        case .file(let handle):
            do { return try handle.readToEnd() ?? Data() } catch { throw Stop.error("Could not read a file") }
        }
    }

    /// Writes `result` over the file at `path` in place, as git's fopen(…, "wb") does: same file, same permissions.
    private static func writeBack(_ result: Data, to path: [UInt8], name: String) throws {
        let cPath = path.map { CChar(bitPattern: $0) } + [0]
        let descriptor = open(cPath, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
        guard descriptor >= 0 else { throw Stop.error("Could not open \(name) for writing: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let failure: Int32? = result.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + done, buffer.count - done)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return errno }
                done += count
            }
            return nil
        }
        if let failure { throw Stop.error("Could not write to \(name): \(String(cString: strerror(failure)))") }
    }
}
