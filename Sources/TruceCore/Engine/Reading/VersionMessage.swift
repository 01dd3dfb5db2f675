/// The commit message of a version: a one-line summary, a blank line, then trailers git can parse.
///
///     Save notes/todo.md
///
///     Document: notes/todo.md
///     Device: laptop
///
/// A resolution that dropped values has its `DecisionsSection` between the
/// title and the trailers; a restore is a save with `Restores-Dropped:`.
struct VersionMessage: Equatable {
    enum Kind: String, CaseIterable {
        case save = "Save"
        case delete = "Delete"
        case resolve = "Resolve"
        case reopen = "Reopen"
    }

    var kind: Kind
    var key: String
    var device: String
    var resolvedBy: String? = nil
    var resolves: [VersionID] = []
    /// For a reopening: the resolution it undoes (`Reopens:`) and the settled version whose content it restores (`Restores:`).
    var reopens: VersionID? = nil
    var restores: VersionID? = nil
    /// For a resolution, what it kept and dropped; written only, `DecisionsSection.reading` reads it when asked.
    var decisions = DecisionsSection()
    /// For a restore, the dropped value it brings back (`Restores-Dropped:`).
    var restoresDropped: RestoredDrop? = nil

    var text: String {
        var lines = ["\(kind.rawValue) \(key)", ""]
        if !decisions.isEmpty { lines += decisions.lines + [""] }
        lines += ["Document: \(key)", "Device: \(device)"]
        if let resolvedBy { lines.append("Resolved-By: \(resolvedBy)") }
        lines += resolves.map { "Resolves: \($0.hex)" }
        if let reopens { lines.append("Reopens: \(reopens.hex)") }
        if let restores { lines.append("Restores: \(restores.hex)") }
        if let restoresDropped { lines.append("\(RestoredDrop.trailer): \(restoresDropped.text)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a message Truce wrote; nil for any other commit.
    init?(parsing message: String) {
        let lines = MessageLines.split(message)
        guard let title = lines.first,
            let kind = Kind.allCases.first(where: { $0.rawValue.utf8.elementsEqual(MessageLines.firstWord(of: title).utf8) })
        else { return nil }
        var key: String?, device: String?, resolvedBy: String?, resolves: [VersionID] = [], reopens: VersionID?, restores: VersionID?
        var restoresDropped: RestoredDrop?
        for line in lines.dropFirst() {
            guard let (name, value) = MessageLines.trailer(in: line) else { continue }
            switch name {
            case "Document": key = value
            case "Device": device = value
            case "Resolved-By": resolvedBy = value
            case "Resolves": if let id = VersionID(hex: value) { resolves.append(id) }
            case "Reopens": reopens = VersionID(hex: value)
            case "Restores": restores = VersionID(hex: value)
            case RestoredDrop.trailer: restoresDropped = RestoredDrop(parsing: value)
            default: continue
            }
        }
        guard let key, let device else { return nil }
        self.init(kind: kind, key: key, device: device, resolvedBy: resolvedBy, resolves: resolves, reopens: reopens, restores: restores)
        self.restoresDropped = restoresDropped
    }

    init(
        kind: Kind, key: String, device: String, resolvedBy: String? = nil, resolves: [VersionID] = [], reopens: VersionID? = nil,
        restores: VersionID? = nil
    ) {
        self.kind = kind
        self.key = key
        self.device = device
        self.resolvedBy = resolvedBy
        self.resolves = resolves
        self.reopens = reopens
        self.restores = restores
    }
}

/// Commit messages read as git reads them: lines end at the byte `\n`, a trailer's name ends at the first `: `.
///
/// Never by `Character`: a key may start with a combining mark or a joiner,
/// which `String` glues to the space before it, so `hasPrefix("Document: ")`
/// and `split(separator: " ")` would miss the boundary.
enum MessageLines {
    /// The lines of `message`, split at each byte `\n`.
    static func split(_ message: String) -> [Substring] { message.pieces(separatedBy: UInt8(ascii: "\n")) }

    /// The bytes of `line` before its first space.
    static func firstWord(of line: Substring) -> Substring {
        Substring(line.utf8.prefix { $0 != UInt8(ascii: " ") })
    }

    /// Every `Name: value` line of `message` by name, a later line winning; names are ASCII, so `String` keys compare as bytes.
    static func trailers(of message: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in split(message) {
            if let (name, value) = trailer(in: line) { fields[name] = value }
        }
        return fields
    }

    /// The name and value of a `Name: value` line, split at the first `: ` (keys may hold `: ` themselves); the name is ASCII.
    static func trailer(in line: Substring) -> (name: String, value: String)? {
        let bytes = line.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let next = bytes.index(after: index)
            if bytes[index] == UInt8(ascii: ":"), next < bytes.endIndex, bytes[next] == UInt8(ascii: " ") {
                let name = bytes[bytes.startIndex..<index]
                guard !name.isEmpty, name.allSatisfy({ $0 < 0x80 }) else { return nil }
                return (String(Substring(name)), String(Substring(bytes[bytes.index(after: next)...])))
            }
            index = next
        }
        return nil
    }
}
