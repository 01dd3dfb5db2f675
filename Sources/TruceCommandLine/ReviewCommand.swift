import Foundation
import Truce

struct ReviewCommand: Command {
    static let name = "review"
    static let synopsis = "truce review [DOC] [--since TOKEN] [--resolver NAME] [--json] | truce review DOC --restore POINT [--device NAME]"
    static let summary = "list what automatic resolutions kept and dropped, then the new token; --restore brings a dropped value back"
    static let options: [Option] = [
        .value("--since", help: "the token a previous 'review' or 'changes' printed (default: from the start)"),
        .value("--resolver", help: "only the resolutions this resolver made"),
        .value("--restore", help: "bring back the value dropped at POINT (as review prints it: /theme, or /theme@VERSION)"),
        .device,
        .json,
    ]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        try invocation.rejectExtraPositionals(beyond: 1)
        let arguments = invocation.arguments
        let key = try arguments.positionals.isEmpty ? nil : invocation.key()
        var token = ChangeHistory.Token.beginning
        if let text = arguments.value("--since") {
            guard let parsed = ChangeHistory.Token(text) else {
                throw TruceError.invalidToken(text, reason: "it is not a token 'truce review' or 'truce changes' printed")
            }
            token = parsed
        }
        let store = try invocation.openStore()
        let review = try store.review(key, since: token, resolver: arguments.value("--resolver"))
        if let point = arguments.value("--restore") {
            guard let key else { throw UsageError("--restore needs DOC") }
            return try await restore(point, of: key, from: review, in: store, invocation)
        }
        if invocation.wantsJSON {
            try invocation.output.json(review)
            return .success
        }
        for resolution in review.resolutions { print(resolution, invocation.output) }
        invocation.output.out("token: \(review.token)")
        return .success
    }

    /// `<resolution>  <date>  <resolver>  <who ran it here, or "received">  <key>`, then each decision and its values.
    private static func print(_ reviewed: ReviewedResolution, _ output: Output) {
        let version = reviewed.resolution
        // A resolution a sync brought is journaled under its commit's author, the resolver: who ran it is not known here.
        let runBy = reviewed.author.utf8.elementsEqual(reviewed.resolver.utf8) ? "received" : visible(reviewed.author)
        var heading = "\(version.id.hex)  \(ISO8601.format(version.modificationDate))  \(reviewed.resolver)  \(runBy)  \(reviewed.key)"
        if reviewed.decisions.isEmpty, reviewed.problem == nil, reviewed.unlistedDecisions == 0 { heading += "  (nothing dropped)" }
        output.out(heading)
        if let problem = reviewed.problem { output.out("  \(problem)") }
        var dropped = reviewed.droppedValues[...]
        for decision in reviewed.decisions {
            let place = decision.point.map { "at \(quoted(Data($0.utf8)))" } ?? "the whole document"
            output.out("  " + place + (decision.rule.isEmpty ? "" : ": " + visible(decision.rule)))
            if let kept = decision.kept { output.out("    kept     " + describe(kept, whole: decision.isWholeDocument)) }
            // The dropped values are listed decision by decision, in order.
            for value in dropped.prefix(decision.dropped.count) {
                var line = "    dropped  " + describe(value.value, whole: decision.isWholeDocument)
                if let restoredBy = value.restoredBy {
                    line += "  restored by \(restoredBy.short)"
                } else {
                    line += "  restore: --restore \(quotedIfNeeded(value.restoreName))"
                }
                output.out(line)
            }
            dropped = dropped.dropFirst(decision.dropped.count)
        }
        if reviewed.unlistedDecisions > 0 {
            output.out("  and \(reviewed.unlistedDecisions) more decisions, not listed: compare the versions it settled with 'truce cat'")
        }
    }

    /// `<device>  <date>  <short id>  <value>`.
    private static func describe(_ value: ResolutionDecision.Value, whole: Bool) -> String {
        var text = "\(visible(value.deviceName))  \(ISO8601.format(value.modificationDate))  \(value.version.short)"
        guard !whole else { return text + "  (the whole version)" }
        guard let content = value.content else { return text + "  (absent)" }
        var end = min(content.count, displayLimit)
        // Not inside a character: back to its first byte.
        while end < content.count, end > displayLimit - 3, content[content.startIndex + end] & 0xC0 == 0x80 { end -= 1 }
        text += "  = " + shown(Data(content.prefix(end)))
        if value.isCut || end < content.count { text += "… (\(value.size) bytes)" }
        return text
    }

    /// Bytes of a value shown on its line; `--json` gives all the commit holds.
    private static let displayLimit = 80

    /// Brings back the value `name` names, from the newest resolution in `review` that dropped one there.
    private static func restore(
        _ name: String, of key: DocumentKey, from review: ResolutionReview, in store: DocumentStore, _ invocation: Invocation
    ) async throws -> ExitCode {
        let dropped = review.droppedValues
        func matches(_ value: DroppedValue) -> Bool {
            if (value.point ?? "").utf8.elementsEqual(name.utf8) || value.restoreName.utf8.elementsEqual(name.utf8) { return true }
            // POINT@PREFIX: the dropped head by any unique prefix of its id, 4 digits or more.
            guard let at = name.utf8.lastIndex(of: UInt8(ascii: "@")) else { return false }
            let point = Substring(name.utf8[..<at]), prefix = String(Substring(name.utf8[name.utf8.index(after: at)...]))
            return prefix.utf8.count >= 4 && (value.point ?? "").utf8.elementsEqual(point.utf8)
                && value.value.version.hex.hasPrefix(prefix.lowercased())
        }
        guard let newest = dropped.last(where: matches) else {
            throw TruceError.nothingToRestore(
                key, reason: "no automatic resolution dropped a value at \(quoted(Data(name.utf8))); 'truce review \(key)' lists them")
        }
        let candidates = dropped.filter { $0.resolution == newest.resolution && matches($0) }
        guard candidates.count == 1 else {
            throw InputError(
                "resolution \(newest.resolution.short) dropped \(candidates.count) values there; name one: "
                    + candidates.map(\.restoreName).joined(separator: ", "))
        }
        guard let result = try await store.restore(newest, device: invocation.device()) else {
            if invocation.wantsJSON {
                try invocation.output.json(["restored": false])
            } else {
                invocation.output.out("nothing to restore: the current version of \(key) already holds that value")
            }
            return .success
        }
        try SaveCommand.report(result, invocation)
        return .success
    }

    /// A value as its text (JSON shows as JSON), on one line: line breaks and tabs as `\n`, `\r` and `\t`, invisible
    /// characters as `\u{…}`, and in bytes that are not UTF-8 each one above 0x7F as `\xHH`.
    private static func shown(_ data: Data) -> String {
        quoted(data, quotes: false)
    }

    /// `"…"` with quotes and backslashes escaped too (`quotes`), as a place is shown.
    private static func quoted(_ data: Data, quotes: Bool = true) -> String {
        func escaped(_ scalar: Unicode.Scalar) -> String {
            switch scalar {
            case "\"" where quotes: "\\\""
            case "\\" where quotes: "\\\\"
            case "\n": "\\n"
            case "\t": "\\t"
            case "\r": "\\r"
            default: visible(String(scalar))
            }
        }
        let body: [String]
        if let text = String(validating: data, as: UTF8.self) {
            body = text.unicodeScalars.map(escaped)
        } else {
            body = data.map { $0 < 0x80 ? escaped(Unicode.Scalar($0)) : String(format: "\\x%02X", $0) }
        }
        return quotes ? "\"" + body.joined() + "\"" : body.joined()
    }

    /// `text` with control and format characters (a bidirectional override, a zero-width space) written as `\u{…}`,
    /// so a value a replica sent cannot reorder or hide what the line says.
    private static func visible(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A restore name as a shell word: quoted when it holds anything but letters, digits and `/@._-`.
    private static func quotedIfNeeded(_ name: String) -> String {
        let plain =
            !name.isEmpty
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/@._-~".unicodeScalars.contains($0)) }
        return plain ? name : "'" + visible(name).replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
