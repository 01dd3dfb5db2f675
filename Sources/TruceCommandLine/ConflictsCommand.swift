import Foundation
import Truce

struct ConflictsCommand: Command {
    static let name = "conflicts"
    static let synopsis = "truce conflicts DOC"
    static let summary = "list the conflict points of DOC: each hunk's id, line range, and the text of the base and of every head"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let key = try invocation.key()
        let store = try invocation.openStore()
        let conflict: ConflictSet
        do {
            conflict = try store.contestedConflictSet(of: key)
        } catch .notInConflict {
            if invocation.wantsJSON {
                try invocation.output.json(ConflictsReport(document: key, points: []))
            } else {
                invocation.output.out("\(key): not in conflict")
            }
            return .success
        }
        let points = try await store.conflictPoints(for: key)
        if invocation.wantsJSON {
            try invocation.output.json(ConflictsReport(document: key, points: points))
        } else {
            invocation.output.out(describe(points, of: conflict).joined(separator: "\n"))
        }
        return .success
    }

    /// The text form of conflict points, shared with `resolve` when it needs a person.
    static func describe(_ points: [ConflictPoint], of conflict: ConflictSet) -> [String] {
        let noun = points.count == 1 ? "conflict point" : "conflict points"
        let base = conflict.base.map { " (base \($0.version.id.short))" } ?? " (no common base)"
        var lines = ["\(conflict.key): \(points.count) \(noun) among \(conflict.heads.count) heads\(base)"]
        for point in points {
            lines.append("")
            if let path = point.path {
                lines.append("\(point.id)  path \(path.isEmpty ? "\"\" (the whole document)" : path)" + (point.reason.map { ": \($0)" } ?? ""))
            } else {
                lines.append(point.id + (point.baseLines.map { "  base \($0)" } ?? "  whole document"))
            }
            if let baseSide = conflict.base {
                lines.append("  base \(baseSide.version.id.short):")
                lines += quote(point.isWholeDocument ? baseSide.content : point.base, atPath: point.path != nil)
            }
            for side in point.sides {
                let role = side.isCurrent ? "current" : "conflict"
                let range = side.lines.map { ", \($0)" } ?? ""
                lines.append("  \(role) \(side.version.short) \(side.deviceName)\(range):")
                lines += quote(side.text, atPath: point.path != nil)
            }
        }
        return lines
    }

    private static func quote(_ text: Data?, atPath: Bool = false) -> [String] {
        guard let text else { return [atPath ? "    (absent)" : "    (deleted)"] }
        if TextMerge.isBinary(text) { return ["    (binary, \(text.count) bytes)"] }
        if text.isEmpty { return ["    (no lines)"] }
        // At the byte '\n': `String.split` would keep "\r\n", one Character, inside a line.
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { "    | " + String(decoding: $0, as: UTF8.self) }
        if text.last == UInt8(ascii: "\n") { lines.removeLast() } else { lines.append("    (no newline at end)") }
        return lines
    }
}

struct ConflictsReport: Encodable {
    let document: DocumentKey
    let points: [ConflictPoint]
}
