import Foundation

/// What a resolution kept and dropped, as the paragraph of its commit message between the title and the trailers.
///
///     Resolve settings.json
///
///     Decisions:
///       at "/theme": the latest change wins
///         kept 5f3a… 2026-11-30T10:05:00Z "phone" = "dark"
///         dropped 8c1d… 2026-11-30T10:00:00Z "laptop" = "light"
///       at "/font": the latest change wins
///         kept 5f3a… 2026-11-30T10:05:00Z "phone" absent
///         dropped 8c1d… 2026-11-30T10:00:00Z "laptop" cut from 4096 bytes = "Lorem ipsum…
///       the whole document: modify-wins keeps the edit
///         kept 5f3a… 2026-11-30T10:05:00Z "phone"
///         dropped 8c1d… 2026-11-30T10:00:00Z "laptop"
///       and 3 more decisions, 5 dropped values, not listed
///
///     Document: settings.json
///     Device: last-writer-wins
///     Resolved-By: last-writer-wins
///     Resolves: 8c1d…
///
/// The trailers stay the message's last paragraph, so `git interpret-trailers
/// --parse` reads them as before, and every line of the section starts with
/// spaces, so no reader of trailers (this one or an older replica's) takes a
/// line of it for one. Places, rules, devices and values are written by
/// `MessageEscaping`; a value keeps its first `valueLimit` bytes (a cut never
/// splits a character) and says how long it was: the dropped version holds the
/// rest. Decisions past `sectionLimit` bytes are counted, not listed.
///
/// The section is a function of the conflict and what the resolver
/// recorded: versions are those of the conflict's heads, each with the device
/// and date its commit records; decisions are sorted (the whole document
/// first, then by place, by bytes) and each dropped list in the
/// current-version rule's order, so replicas that settle the same conflict
/// alike write the same bytes.
struct DecisionsSection: Equatable {
    /// The decisions listed, as the commit holds them: values cut, versions checked, sorted.
    var decisions: [ResolutionDecision] = []
    /// Decisions past `sectionLimit`, counted only.
    var unlistedDecisions = 0
    /// The values those unlisted decisions dropped.
    var unlistedDroppedValues = 0

    /// The longest value written whole; a longer one keeps this many bytes at most.
    static let valueLimit = 200
    /// The longest rule written whole.
    static let ruleLimit = 200
    /// Bytes of decision lines past which decisions are only counted: bounds what every read of the commit parses.
    static let sectionLimit = 64 * 1024
    static let heading = "Decisions:"

    /// Every value the decisions drop, unlisted ones included: what events report.
    var droppedValueCount: Int { decisions.reduce(unlistedDroppedValues) { $0 + $1.dropped.count } }

    var isEmpty: Bool { decisions.isEmpty && unlistedDecisions == 0 }

    init() {}

    /// The section for what a resolver of `conflict` recorded: values from versions that are not heads of the conflict
    /// left out, and decisions that then drop nothing; devices and dates as the heads' commits record them.
    init(normalizing recorded: [ResolutionDecision], for conflict: ConflictSet) {
        let versions = conflict.settledVersions
        let order = Dictionary(versions.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { first, _ in first })
        func value(_ given: ResolutionDecision.Value, whole: Bool) -> ResolutionDecision.Value? {
            guard let index = order[given.version] else { return nil }
            let version = versions[index]
            return Self.cut(
                ResolutionDecision.Value(
                    version: version.id, deviceName: version.deviceName, modificationDate: version.modificationDate,
                    content: whole ? nil : given.content))
        }
        var normalized: [(decision: ResolutionDecision, lines: [String])] = []
        for decision in recorded {
            let whole = decision.point == nil
            var seen = Set<VersionID>()
            let dropped = decision.dropped.compactMap { value($0, whole: whole) }.filter { seen.insert($0.version).inserted }
                .sorted { order[$0.version]! < order[$1.version]! }
            // A decision that drops nothing is written only as recorded, with no values: a rule that kept every change.
            guard !dropped.isEmpty || (decision.dropped.isEmpty && decision.kept == nil) else { continue }
            let cleaned = ResolutionDecision(
                point: decision.point, rule: Self.prefix(of: Array(decision.rule.utf8), limit: Self.ruleLimit).text,
                kept: decision.kept.flatMap { value($0, whole: whole) }, dropped: dropped)
            normalized.append((cleaned, Self.lines(for: cleaned)))
        }
        normalized.sort { lhs, rhs in
            let (left, right) = (lhs.decision.point.map { Array($0.utf8) }, rhs.decision.point.map { Array($0.utf8) })
            if left != right {
                guard let left else { return true }
                guard let right else { return false }
                return left.lexicographicallyPrecedes(right)
            }
            return Array(lhs.lines.joined(separator: "\n").utf8).lexicographicallyPrecedes(Array(rhs.lines.joined(separator: "\n").utf8))
        }
        var budget = Self.sectionLimit
        var previous: [String]?
        for (decision, lines) in normalized where lines != previous {
            previous = lines
            let size = lines.reduce(0) { $0 + $1.utf8.count + 1 }
            if unlistedDecisions == 0, size <= budget {
                decisions.append(decision)
                budget -= size
            } else {
                unlistedDecisions += 1
                unlistedDroppedValues += decision.dropped.count
            }
        }
    }

    /// The message lines: the heading, then each decision; none when there is nothing to record.
    var lines: [String] {
        guard !isEmpty else { return [] }
        var lines = [Self.heading]
        for decision in decisions { lines += Self.lines(for: decision) }
        if unlistedDecisions > 0 {
            lines.append("  and \(unlistedDecisions) more decisions, \(unlistedDroppedValues) dropped values, not listed")
        }
        return lines
    }

    private static func lines(for decision: ResolutionDecision) -> [String] {
        let place = decision.point.map { "at " + MessageEscaping.escaped(Array($0.utf8), quoted: true) } ?? "the whole document"
        var lines = ["  " + place + (decision.rule.isEmpty ? "" : ": " + MessageEscaping.escaped(Array(decision.rule.utf8)))]
        func line(_ role: String, _ value: ResolutionDecision.Value) -> String {
            var text = "    \(role) \(value.version.hex) \(ISO8601.format(value.modificationDate)) "
            text += MessageEscaping.escaped(Array(value.deviceName.utf8), quoted: true)
            guard decision.point != nil else { return text }
            guard let content = value.content else { return text + " absent" }
            if value.isCut { text += " cut from \(value.size) bytes" }
            return text + " = " + MessageEscaping.escaped(content)
        }
        if let kept = decision.kept { lines.append(line("kept", kept)) }
        for value in decision.dropped { lines.append(line("dropped", value)) }
        return lines
    }

    /// `value` with its content cut to `valueLimit` bytes when longer.
    private static func cut(_ value: ResolutionDecision.Value) -> ResolutionDecision.Value {
        guard let content = value.content, content.count > valueLimit else { return value }
        return ResolutionDecision.Value(
            version: value.version, deviceName: value.deviceName, modificationDate: value.modificationDate,
            content: Data(prefix(of: Array(content), limit: valueLimit).bytes), size: content.count)
    }

    /// At most `limit` bytes of `bytes`, ending before a UTF-8 character the limit would split.
    private static func prefix(of bytes: [UInt8], limit: Int) -> (bytes: [UInt8], text: String) {
        guard bytes.count > limit else { return (bytes, String(decoding: bytes, as: UTF8.self)) }
        var end = limit
        // Back over continuation bytes to the lead byte of the character the cut falls in, when it is one.
        var start = end
        while start > 0, start > limit - 3, bytes[start] & 0xC0 == 0x80 { start -= 1 }
        if bytes[start] >= 0xC0 { end = start }
        let kept = Array(bytes[..<end])
        return (kept, String(decoding: kept, as: UTF8.self))
    }
}

// MARK: - Reading

extension DecisionsSection {
    /// What a commit message holds: no section, a section, or one that cannot be read (another replica wrote it so),
    /// with the reason.
    enum Reading: Equatable {
        case none
        case section(DecisionsSection)
        case malformed(String)
    }

    /// Reads the section of `message`: the paragraph right after the title, when it starts with the heading.
    ///
    /// Nothing in it is trusted: a line that is not one this type writes
    /// makes the whole section `.malformed`, and the versions it names are
    /// only names until a reader checks them against the resolution's parents.
    static func reading(_ message: String) -> Reading {
        let lines = MessageLines.split(message)
        guard lines.count > 2, lines[1].isEmpty, lines[2].utf8.elementsEqual(heading.utf8) else { return .none }
        var section = DecisionsSection()
        var current: (point: String?, rule: String, kept: ResolutionDecision.Value?, dropped: [ResolutionDecision.Value])?
        func finish() -> Bool {
            guard let decision = current else { return true }
            current = nil
            // Values or none at all: a decision that kept a value and dropped nothing is not one this type writes.
            guard !decision.dropped.isEmpty || decision.kept == nil else { return false }
            section.decisions.append(ResolutionDecision(point: decision.point, rule: decision.rule, kept: decision.kept, dropped: decision.dropped))
            return true
        }
        for (offset, line) in lines.dropFirst(3).enumerated() {
            let bytes = Array(line.utf8)
            if bytes.isEmpty { break }
            func malformed(_ reason: String) -> Reading { .malformed("line \(offset + 4) of its message \(reason)") }
            if section.unlistedDecisions > 0 { return malformed("follows the count of unlisted decisions") }
            if bytes.starts(with: Array("    ".utf8)) {
                guard current != nil else { return malformed("lists a value before any place") }
                guard let (role, value) = choice(bytes.dropFirst(4), whole: current!.point == nil) else {
                    return malformed("is not a kept or dropped value")
                }
                if role == "kept" {
                    guard current!.kept == nil, current!.dropped.isEmpty else { return malformed("keeps a second value") }
                    current!.kept = value
                } else {
                    current!.dropped.append(value)
                }
            } else if bytes.starts(with: Array("  ".utf8)) {
                guard finish() else { return malformed("ends a decision that keeps a value and drops none") }
                if let counts = unlisted(bytes.dropFirst(2)) {
                    (section.unlistedDecisions, section.unlistedDroppedValues) = counts
                    continue
                }
                guard let (point, rule) = place(bytes.dropFirst(2)) else { return malformed("is not a place") }
                current = (point, rule, nil, [])
            } else {
                return malformed("is not indented as a decision")
            }
        }
        guard finish() else { return .malformed("its last decision keeps a value and drops none") }
        if section.isEmpty { return .malformed("its decisions section is empty") }
        return .section(section)
    }

    /// `at "<point>"` or `the whole document`, then `: <rule>` or nothing.
    private static func place(_ bytes: ArraySlice<UInt8>) -> (point: String?, rule: String)? {
        var rest: ArraySlice<UInt8>
        var point: String?
        let whole = Array("the whole document".utf8)
        if bytes.starts(with: whole) {
            rest = bytes.dropFirst(whole.count)
        } else if bytes.starts(with: Array("at ".utf8)), let (text, after) = MessageEscaping.unquoted(bytes.dropFirst(3)),
            let decoded = String(validating: text, as: UTF8.self)
        {
            point = decoded
            rest = after
        } else {
            return nil
        }
        if rest.isEmpty { return (point, "") }
        guard rest.starts(with: Array(": ".utf8)), let rule = MessageEscaping.unescaped(rest.dropFirst(2)),
            let text = String(validating: rule, as: UTF8.self)
        else { return nil }
        return (point, text)
    }

    /// `kept|dropped <id> <date> "<device>"`, then, at a place, `absent` or `[cut from N bytes ]= <value>`.
    private static func choice(_ bytes: ArraySlice<UInt8>, whole: Bool) -> (role: String, value: ResolutionDecision.Value)? {
        let words = bytes.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard words.count == 4, let role = String(validating: words[0], as: UTF8.self), role == "kept" || role == "dropped",
            let hex = String(validating: words[1], as: UTF8.self), hex.utf8.count == 40, let version = VersionID(hex: hex),
            version.hex == hex, let date = ISO8601.parseStrict(words[2]),
            let (device, after) = MessageEscaping.unquoted(words[3]), let deviceName = String(validating: device, as: UTF8.self)
        else { return nil }
        func value(_ content: [UInt8]?, size: Int? = nil) -> (String, ResolutionDecision.Value) {
            (
                role,
                ResolutionDecision.Value(
                    version: version, deviceName: deviceName, modificationDate: date, content: content.map { Data($0) }, size: size)
            )
        }
        if whole { return after.isEmpty ? value(nil) : nil }
        if after.elementsEqual(Array(" absent".utf8)) { return value(nil) }
        var rest = after
        var size: Int?
        let cut = Array(" cut from ".utf8)
        if rest.starts(with: cut) {
            let digits = rest.dropFirst(cut.count).prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard (1...12).contains(digits.count), let number = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
            rest = rest.dropFirst(cut.count + digits.count)
            guard rest.starts(with: Array(" bytes".utf8)) else { return nil }
            rest = rest.dropFirst(6)
            size = number
        }
        guard rest.starts(with: Array(" = ".utf8)), let content = MessageEscaping.unescaped(rest.dropFirst(3)) else { return nil }
        if let size, size <= content.count { return nil }
        return value(content, size: size)
    }

    /// `and N more decisions, M dropped values, not listed`.
    private static func unlisted(_ bytes: ArraySlice<UInt8>) -> (Int, Int)? {
        let words = bytes.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard words.count == 9, words[0] == "and", words[2] == "more", words[3] == "decisions,", words[5] == "dropped",
            words[6] == "values,", words[7] == "not", words[8] == "listed",
            let decisions = Int(words[1]), let dropped = Int(words[4]), decisions > 0, dropped >= 0,
            String(decisions) == words[1], String(dropped) == words[4]
        else { return nil }
        return (decisions, dropped)
    }
}
