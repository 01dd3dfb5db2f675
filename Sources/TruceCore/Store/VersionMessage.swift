/// The commit message of a version: a one-line summary, a blank line, then trailers git can parse.
///
///     Save notes/todo.md
///
///     Document: notes/todo.md
///     Device: laptop
struct VersionMessage: Equatable {
    enum Kind: String { case save = "Save", delete = "Delete", resolve = "Resolve", reopen = "Reopen" }

    var kind: Kind
    var key: String
    var device: String
    var resolvedBy: String? = nil
    var resolves: [VersionID] = []
    /// For a reopening: the resolution it undoes (`Reopens:`) and the settled version whose content it restores (`Restores:`).
    var reopens: VersionID? = nil
    var restores: VersionID? = nil

    var text: String {
        var lines = ["\(kind.rawValue) \(key)", "", "Document: \(key)", "Device: \(device)"]
        if let resolvedBy { lines.append("Resolved-By: \(resolvedBy)") }
        lines += resolves.map { "Resolves: \($0.hex)" }
        if let reopens { lines.append("Reopens: \(reopens.hex)") }
        if let restores { lines.append("Restores: \(restores.hex)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a message Truce wrote; nil for any other commit.
    init?(parsing message: String) {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false)
        guard let title = lines.first, let kind = Kind(rawValue: String(title.prefix { $0 != " " })) else { return nil }
        var key: String?, device: String?, resolvedBy: String?, resolves: [VersionID] = [], reopens: VersionID?, restores: VersionID?
        // Trailers are the last paragraph; keys may contain ": ", so split at the first one only.
        for line in lines.dropFirst() {
            if let value = Self.value(of: "Document", in: line) { key = value }
            else if let value = Self.value(of: "Device", in: line) { device = value }
            else if let value = Self.value(of: "Resolved-By", in: line) { resolvedBy = value }
            else if let value = Self.value(of: "Resolves", in: line), let id = VersionID(hex: value) { resolves.append(id) }
            else if let value = Self.value(of: "Reopens", in: line) { reopens = VersionID(hex: value) }
            else if let value = Self.value(of: "Restores", in: line) { restores = VersionID(hex: value) }
        }
        guard let key, let device else { return nil }
        self.init(kind: kind, key: key, device: device, resolvedBy: resolvedBy, resolves: resolves, reopens: reopens, restores: restores)
    }

    init(kind: Kind, key: String, device: String, resolvedBy: String? = nil, resolves: [VersionID] = [], reopens: VersionID? = nil,
         restores: VersionID? = nil) {
        self.kind = kind
        self.key = key
        self.device = device
        self.resolvedBy = resolvedBy
        self.resolves = resolves
        self.reopens = reopens
        self.restores = restores
    }

    private static func value(of trailer: String, in line: Substring) -> String? {
        let prefix = trailer + ": "
        guard line.hasPrefix(prefix) else { return nil }
        return String(line.dropFirst(prefix.count))
    }
}
