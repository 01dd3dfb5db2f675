import Foundation
import Truce

struct MergeDriverCommand: Command {
    static let name = "merge-driver"
    static let synopsis = "truce merge-driver [--resolver NAME] [--marker-size N] BASE CURRENT OTHER [PATH]"
    static let summary = "a git merge driver: merge OTHER into CURRENT against BASE, result in CURRENT; exit 0 clean, 1 conflicted"
    static let options: [Option] = [
        .value("--resolver", help: "structured, three-way or union (default: structured for .json and .plist PATHs, else three-way)"),
        .value("--marker-size", help: "conflict markers N characters long (git's %L; default 7)"),
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
        var markerSize = 7
        if let text = invocation.arguments.value("--marker-size") {
            guard let size = Int(text), (1...TextMerge.maximumMarkerSize).contains(size) else {
                throw UsageError("--marker-size needs a whole number from 1 to \(TextMerge.maximumMarkerSize), not '\(text)'")
            }
            markerSize = size
        }
        let (base, current, other) = (try readFile(paths[0]), try readFile(paths[1]), try readFile(paths[2]))

        var result: (content: Data, conflicts: Int)?
        if resolver == .structured {
            do {
                let merged = try StructuredMerge.mergeFiles(
                    base: base, current: current, other: other, path: path ?? paths[1],
                    markerSize: markerSize)
                result = (merged.content, merged.conflictCount)
            } catch {
                invocation.output.error("merge-driver: \(path ?? paths[1]): \(error.description); merged line by line instead")
            }
        }
        if result == nil {
            var options = TextMergeOptions(markerSize: markerSize)
            if resolver == .union { options.favor = .union }
            guard let merged = try TextMerge.merge(base: base, ours: current, theirs: other, options: options) else {
                invocation.output.error("merge-driver: \(path ?? paths[1]) is binary; the current file is kept")
                return .needsPerson
            }
            result = (merged.content, merged.conflictCount)
        }
        do {
            try result!.content.write(to: URL(fileURLWithPath: paths[1]), options: .atomic)
        } catch {
            throw InputError("merge-driver: cannot write \(paths[1]): \(error.localizedDescription)")
        }
        return result!.conflicts == 0 ? .success : .needsPerson
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
