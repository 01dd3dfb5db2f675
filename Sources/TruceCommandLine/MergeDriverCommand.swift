import Foundation
import Truce

struct MergeDriverCommand: Command {
    static let name = "merge-driver"
    static let synopsis =
        "truce merge-driver [--resolver NAME] [--marker-size N] [--conflict-style STYLE] [-L CURRENT [-L BASE [-L OTHER]]] BASE CURRENT OTHER [PATH]"
    static let summary = "a git merge driver: merge OTHER into CURRENT against BASE, result in CURRENT; exit 0 clean, 1 conflicted"
    static let options: [Option] = [
        .value("--resolver", help: "structured, three-way or union (default: structured for .json and .plist PATHs, else three-way)"),
        .value("--marker-size", help: "conflict markers at least N characters long (git's %L; default 7), longer than any such line in the files"),
        .value(
            "--conflict-style",
            help: "merge, diff3 (the base's part in conflicts too) or zdiff3 (default: merge.conflictStyle of the repository here, else merge)"),
        .value("-L", help: "a label for conflict markers, as in git merge-file: for CURRENT (git's %X), then BASE (%S), then OTHER (%Y)"),
    ]

    /// The resolvers a driver can run on plain files, outside any store.
    enum DriverResolver: String, CaseIterable {
        case structured
        case threeWay = "three-way"
        case union
    }

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 4)
        let paths = try [invocation.positional(0, "BASE"), invocation.positional(1, "CURRENT"), invocation.positional(2, "OTHER")]
        let path = invocation.arguments.positionals.count > 3 ? invocation.arguments.positionals[3] : nil
        let resolver = try chooseResolver(invocation.arguments.value("--resolver"), path: path ?? paths[1])
        var requestedSize = 7
        if let text = invocation.arguments.value("--marker-size") {
            guard let size = Int(text), (1...TextMerge.maximumMarkerSize).contains(size) else {
                throw UsageError("--marker-size needs a whole number from 1 to \(TextMerge.maximumMarkerSize), not '\(text)'")
            }
            requestedSize = size
        }
        let labels = invocation.arguments.all("-L")
        guard labels.count <= 3 else { throw UsageError("too many labels: -L is given at most three times") }
        let style = try conflictStyle(invocation.arguments.value("--conflict-style"))
        let (base, current, other) = (try readFile(paths[0]), try readFile(paths[1]), try readFile(paths[2]))

        var markers = StructuredMerge.FileMarkers()
        (markers.oursLabel, markers.baseLabel, markers.theirsLabel) = (
            labels.count > 0 ? labels[0] : "ours", labels.count > 1 ? labels[1] : "base", labels.count > 2 ? labels[2] : "theirs"
        )
        markers.showsBase = style != .merge
        // Markers that content could be taken for would make the result unreadable: longer ones then.
        markers.size = TextMerge.markerSize(requestedSize, avoiding: [base, current, other])

        var result: (content: Data, conflicts: Int)?
        if resolver == .structured {
            do {
                let merged = try StructuredMerge.mergeFiles(
                    base: base, current: current, other: other, path: path ?? paths[1], fieldRules: try fieldRules(for: path),
                    markers: markers)
                result = (merged.content, merged.conflictCount)
            } catch {
                let reason = (error as? TruceError)?.errorDescription ?? "\(error)"
                invocation.output.error("merge-driver: \(path ?? paths[1]): \(reason); merged line by line instead")
            }
        }
        if result == nil {
            var options = TextMergeOptions(
                style: style, markerSize: markers.size, oursLabel: markers.oursLabel, baseLabel: markers.baseLabel,
                theirsLabel: markers.theirsLabel)
            if resolver == .union { options.favor = .union }
            guard let merged = try TextMerge.merge(base: base, ours: current, theirs: other, options: options) else {
                invocation.output.error("merge-driver: \(path ?? paths[1]) is binary; the current file is kept")
                return .needsPerson
            }
            result = (merged.content, merged.conflictCount)
        }
        // Unchanged bytes are not written again: the file git handed over is already the result.
        if result!.content != current {
            do {
                try result!.content.write(to: URL(fileURLWithPath: paths[1]), options: .atomic)
            } catch {
                throw InputError("merge-driver: cannot write \(paths[1]): \(error.localizedDescription)")
            }
        }
        return result!.conflicts == 0 ? .success : .needsPerson
    }

    /// `--conflict-style` when given, else `merge.conflictStyle` of the repository git runs the driver in (as git's own
    /// merge reads it), else merge.
    static func conflictStyle(_ given: String?) throws -> TextMergeOptions.ConflictStyle {
        if let given {
            guard let style = TextMergeOptions.ConflictStyle(rawValue: given) else {
                throw UsageError("--conflict-style is merge, diff3 or zdiff3, not '\(given)'")
            }
            return style
        }
        let environment = GitEnvironment()
        guard
            let repository = try GitRepository.discover(
                from: FileManager.default.currentDirectoryPath, gitDirectory: environment.gitDirectory,
                ceilingDirectories: environment.ceilingDirectories)
        else { return .merge }
        do {
            return try environment.conflictStyle(in: repository) ?? .merge
        } catch {
            throw InputError("merge-driver: \(error.message.replacingOccurrences(of: "\n", with: "; "))")
        }
    }

    /// The file of merge rules for JSON fields beside the repository's `.gitattributes` (git runs a driver at the top of
    /// the working tree), in the format of a store's `.truce/fields`.
    static let fieldRulesFile = ".truce-fields"

    /// The rules of `.truce-fields` that PATH is under; none without PATH or the file.
    static func fieldRules(for path: String?) throws -> [FieldRule] {
        guard let path, let data = FileManager.default.contents(atPath: fieldRulesFile) else { return [] }
        return try FieldRules(parsing: data, name: fieldRulesFile).rules(for: DocumentKey(path))
    }

    /// `--resolver` when given, else by PATH's extension: structured for `.json` and `.plist`, three-way otherwise.
    static func chooseResolver(_ name: String?, path: String) throws -> DriverResolver {
        if let name {
            guard let resolver = DriverResolver(rawValue: name) else {
                throw UsageError("merge-driver runs \(DriverResolver.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'")
            }
            return resolver
        }
        let fileExtension = path.split(separator: "/").last?.split(separator: ".").dropFirst().last?.lowercased()
        return fileExtension == "json" || fileExtension == "plist" ? .structured : .threeWay
    }
}
