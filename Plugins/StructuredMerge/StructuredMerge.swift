import Foundation
import TruceCore

/// JSON and property lists (XML and binary) merged by structure, conflicts reported per JSON Pointer path.
///
/// Objects merge member by member, recursively; arrays of objects that all
/// carry an identity member (`id`, `uuid`, `key`, `_id`, or one set per path)
/// merge element by element, other arrays as sequences; see `MergeRules` for
/// the options. The result keeps the current version's formatting and types:
/// for JSON, every byte no side changed, and when one side left the document as
/// the base has it, the other side's bytes whole. A key that occurs more than
/// once in an object is matched by occurrence (the n-th with the n-th); an
/// object or array one side moved to another member takes the other side's
/// edits along when the move is unambiguous. Content that is not a document it
/// can read faithfully (invalid JSON, a byte-order mark, invalid UTF-8 in a
/// string, nesting 64 levels deep) passes to the fallback with the reason.
public struct StructuredMerge: PointAnsweringResolver {
    public let name = "structured"

    public init() {}

    public func validate(options: ResolverOptions) throws {
        _ = try MergeRules(options)
    }

    public func settings(for options: ResolverOptions) -> [String] {
        (try? MergeRules(options))?.summary ?? []
    }

    public func resolve(_ conflict: ConflictSet, context: ResolutionContext) async throws -> ResolutionOutcome {
        let rules = try MergeRules(context.options)
        let fold: HeadFold
        do { fold = try HeadFold(conflict) } catch { return .pass(reason: error.description) }
        // A side that left the document as the base has it: the other side's bytes, as git's merge gives them (unless
        // field rules decide: `max` keeps a value the other side lowered).
        if conflict.conflicts.count == 1, context.fieldRules.isEmpty, let base = conflict.base?.content, let current = conflict.current.content,
            let other = conflict.conflicts[0].content
        {
            if base == current { return .resolved(content: other) }
            if base == other { return .resolved(content: current) }
        }
        let (value, conflicts) = try fold.run(rules: rules, fieldRules: context.fieldRules)
        if !conflicts.isEmpty { return .needsPerson(points(conflicts, fold)) }
        guard let value else { return .resolved(content: nil) }
        do {
            return .resolved(content: try fold.current.written(value))
        } catch {
            return .pass(reason: error.description)
        }
    }

    public func conflictPoints(of conflict: ConflictSet, context: ResolutionContext) async throws -> [ConflictPoint]? {
        guard let fold = try? HeadFold(conflict) else { return nil }
        return points(try fold.run(rules: try MergeRules(context.options), fieldRules: context.fieldRules).conflicts, fold)
    }

    public func applying(_ answers: [String: HunkAnswer], to conflict: ConflictSet, context: ResolutionContext) async throws -> Data? {
        let rules = try MergeRules(context.options)
        let fold: HeadFold
        do { fold = try HeadFold(conflict) } catch { throw TruceError.invalidAnswer("\(conflict.key) cannot be merged by structure: \(error)") }
        let conflicts = try fold.run(rules: rules, fieldRules: context.fieldRules).conflicts
        let points = points(conflicts, fold)
        var values: [String: StructuredValue?] = [:]
        for (name, answer) in answers {
            guard let point = points.first(where: { $0.id == name || $0.path.map { Array($0.utf8) == Array(name.utf8) } == true }),
                let path = point.path, let found = conflicts.first(where: { $0.pointer == path })
            else {
                let known = points.map { "\($0.id) \($0.path.map { $0.isEmpty ? "(the whole document)" : $0 } ?? "")" }
                throw TruceError.invalidAnswer("there is no conflict at \(name) in \(conflict.key); conflicts: \(known.joined(separator: ", "))")
            }
            if values[path] != nil { throw TruceError.invalidAnswer("the conflict at \(path) is answered twice") }
            values[path] = try value(for: answer, at: found, named: name, fold)
        }
        let (value, remaining) = try fold.run(rules: rules, fieldRules: context.fieldRules, answers: values)
        if let open = remaining.first {
            throw TruceError.invalidAnswer("the conflict at \(open.pointer.isEmpty ? "the whole document" : open.pointer) has no answer")
        }
        guard let value else { return nil }
        do {
            return try fold.current.written(value)
        } catch {
            throw TruceError.invalidAnswer("the answers do not make a valid document: \(error)")
        }
    }

    /// A JSON document of two heads with `answers` given and the conflicts still open between git's conflict markers,
    /// around just those members, as the merge driver draws them; nil for property lists (markers would break them)
    /// and for three heads or more.
    public func preview(
        _ answers: [String: HunkAnswer], of conflict: ConflictSet, markers: PreviewMarkers, context: ResolutionContext
    ) async throws -> Data? {
        guard conflict.heads.count == 2, let fold = try? HeadFold(conflict), case .json(let layout) = fold.current.format else { return nil }
        let rules = try MergeRules(context.options)
        let conflicts = try fold.run(rules: rules, fieldRules: context.fieldRules).conflicts
        let points = points(conflicts, fold)
        var values: [String: StructuredValue?] = [:]
        for (name, answer) in answers {
            guard let point = points.first(where: { $0.id == name || $0.path == name }), let path = point.path,
                let found = conflicts.first(where: { $0.pointer == path })
            else { continue }
            values[path] = try value(for: answer, at: found, named: name, fold)
        }
        guard let value = try fold.run(rules: rules, fieldRules: context.fieldRules, answers: values).value else { return nil }
        let size = TextMerge.markerSize(7, avoiding: conflict.heads.compactMap(\.content) + [conflict.base?.content].compactMap { $0 })
        let printed = JSONPrinter.Markers(
            size: size, oursLabel: markers.labels.first ?? "ours", baseLabel: markers.baseLabel, theirsLabel: markers.labels.last ?? "theirs",
            showsBase: markers.style != .merge)
        return JSONPrinter.document(value, layout: layout, markers: printed)
    }

    /// The value a person's answer puts at a conflict's path (nil: no member there).
    private func value(for answer: HunkAnswer, at conflict: TreeConflict, named name: String, _ fold: HeadFold) throws -> StructuredValue? {
        let versions = fold.conflict.heads
        func at(_ document: StructuredDocument?) -> StructuredValue? { HeadFold.value(at: conflict.steps, in: document?.root) }
        switch answer {
        case .ours:
            return at(fold.heads[0])
        case .theirs:
            guard versions.count == 2 else {
                throw TruceError.invalidAnswer("\(name)=theirs is ambiguous with \(versions.count - 1) conflict versions; name a version id")
            }
            return at(fold.heads[1])
        case .base:
            return at(fold.base)
        case .both, .bothReversed:
            throw TruceError.invalidAnswer("\(name)=\(answer): a value at a path cannot hold both sides; choose one version or give file:PATH")
        case .version(let prefix):
            if let index = versions.firstIndex(where: { $0.version.id.hex.hasPrefix(prefix) }) { return at(fold.heads[index]) }
            if let base = fold.conflict.base, base.version.id.hex.hasPrefix(prefix) { return at(fold.base) }
            throw TruceError.invalidAnswer("\(name)=\(prefix): no head or base of \(fold.conflict.key) has that id")
        case .text(let data):
            do {
                return try JSONParser.parse(data).value
            } catch {
                throw TruceError.invalidAnswer("the value for \(name) \(error.description)")
            }
        }
    }

    /// One point per conflicting path, base value and every head's value there, numbered in the order met.
    private func points(_ conflicts: [TreeConflict], _ fold: HeadFold) -> [ConflictPoint] {
        var seen = Set<String>()
        var points: [ConflictPoint] = []
        for conflict in conflicts where seen.insert(conflict.pointer).inserted {
            let sides = fold.conflict.heads.enumerated().map { index, side in
                ConflictPoint.Side(
                    version: side.version.id, deviceName: side.version.deviceName, isCurrent: index == 0, lines: nil,
                    text: HeadFold.value(at: conflict.steps, in: fold.heads[index].root).map(fold.current.text(of:)))
            }
            points.append(
                ConflictPoint(
                    id: "H\(points.count + 1)", baseLines: nil,
                    base: HeadFold.value(at: conflict.steps, in: fold.base?.root).map(fold.current.text(of:)),
                    sides: sides, path: conflict.pointer, reason: conflict.reason))
        }
        return points
    }
}
