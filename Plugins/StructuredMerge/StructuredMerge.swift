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
    /// Checks of the merged document written in Swift, beside the field invariants of the rules documents.
    public let checks: [DocumentCheck]

    public init() { checks = [] }

    /// The structured merge with checks of its own: a merge that fails one is not written, and goes to a person.
    public init(checks: [DocumentCheck]) { self.checks = checks }

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
        let (value, conflicts, choices) = try run(fold, rules, context)
        if !conflicts.isEmpty { return .needsPerson(points(conflicts, fold)) }
        guard let value else { return .resolved(content: nil) }
        for decision in decisions(choices, in: value, fold) { context.record(decision) }
        do {
            return .resolved(content: try fold.current.written(value))
        } catch {
            return .pass(reason: error.description)
        }
    }

    public func conflictPoints(of conflict: ConflictSet, context: ResolutionContext) async throws -> [ConflictPoint]? {
        guard let fold = try? HeadFold(conflict) else { return nil }
        return points(try run(fold, try MergeRules(context.options), context).conflicts, fold)
    }

    public func applying(_ answers: [String: HunkAnswer], to conflict: ConflictSet, context: ResolutionContext) async throws -> Data? {
        let rules = try MergeRules(context.options)
        let fold: HeadFold
        do { fold = try HeadFold(conflict) } catch { throw TruceError.invalidAnswer("\(conflict.key) cannot be merged by structure: \(error)") }
        let (_, conflicts, _, asking) = try runAsking(fold, rules, context)
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
        let (value, remaining, _) = try fold.run(rules: rules, fieldRules: context.fieldRules, answers: values, asking: asking)
        if let open = remaining.first {
            throw TruceError.invalidAnswer("the conflict at \(open.pointer.isEmpty ? "the whole document" : open.pointer) has no answer")
        }
        // The answers are checked as the automatic merge was.
        if let broken = try violations(of: value, fold, context).first {
            throw TruceError.invalidAnswer("the answers break an invariant: \(broken.reason)")
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
        let (_, conflicts, _, asking) = try runAsking(fold, rules, context)
        let points = points(conflicts, fold)
        var values: [String: StructuredValue?] = [:]
        for (name, answer) in answers {
            guard let point = points.first(where: { $0.id == name || $0.path == name }), let path = point.path,
                let found = conflicts.first(where: { $0.pointer == path })
            else { continue }
            values[path] = try value(for: answer, at: found, named: name, fold)
        }
        guard let value = try fold.run(rules: rules, fieldRules: context.fieldRules, answers: values, asking: asking).value else { return nil }
        let size = TextMerge.markerSize(7, avoiding: conflict.heads.compactMap(\.content) + [conflict.base?.content].compactMap { $0 })
        let printed = JSONPrinter.Markers(
            size: size, oursLabel: markers.labels.first ?? "ours", baseLabel: markers.baseLabel, theirsLabel: markers.labels.last ?? "theirs",
            showsBase: markers.style != .merge)
        return JSONPrinter.document(value, layout: layout, markers: printed)
    }

    /// The fold under the field rules; where its clean result breaks an invariant or a check, the fold again with a
    /// person asked at each place that broke one.
    private func run(_ fold: HeadFold, _ rules: MergeRules, _ context: ResolutionContext) throws -> (
        value: StructuredValue?, conflicts: [TreeConflict], choices: [FieldRulePass.Choice]
    ) {
        let (value, conflicts, choices, _) = try runAsking(fold, rules, context)
        return (value, conflicts, choices)
    }

    /// `run`, with the places it asked a person about because an invariant broke: answers must be applied with them.
    private func runAsking(_ fold: HeadFold, _ rules: MergeRules, _ context: ResolutionContext) throws -> (
        value: StructuredValue?, conflicts: [TreeConflict], choices: [FieldRulePass.Choice], asking: [[PathStep]: String]
    ) {
        let first = try fold.run(rules: rules, fieldRules: context.fieldRules)
        guard first.conflicts.isEmpty else { return (first.value, first.conflicts, first.choices, [:]) }
        let broken = try violations(of: first.value, fold, context)
        guard !broken.isEmpty else { return (first.value, first.conflicts, first.choices, [:]) }
        var asking: [[PathStep]: String] = [:]
        for violation in broken {
            let steps = InvariantCheck.steps(violation.tokens, in: first.value).steps
            asking[steps] = asking[steps].map { $0 + "; " + violation.reason } ?? violation.reason
        }
        let second = try fold.run(rules: rules, fieldRules: context.fieldRules, asking: asking)
        return (second.value, second.conflicts, second.choices, asking)
    }

    /// The invariants of the rules documents and the checks written in Swift that `value` breaks.
    private func violations(of value: StructuredValue?, _ fold: HeadFold, _ context: ResolutionContext) throws -> [InvariantCheck.Violation] {
        var broken = InvariantCheck.violations(of: context.fieldInvariants, in: value)
        let applying = checks.filter { fold.conflict.key.matches($0.documents) }
        if !applying.isEmpty, let value, let bytes = try? fold.current.written(value) {
            for check in applying {
                if let problem = check.check(bytes) { broken.append(.init(tokens: [], reason: "check '\(check.name)': \(problem)")) }
            }
        }
        return broken
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
