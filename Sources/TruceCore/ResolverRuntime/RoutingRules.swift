import Foundation
internal import TruceGit

/// The text edits `route` makes to the routing documents, and what git's formats let a route hold.
enum RoutingRules {
    /// A gitattributes pattern Truce and `git check-attr` read alike, or `.invalidRoute` saying why not.
    static func checkRoutePattern(_ pattern: String) throws(TruceError) {
        func refuse(_ reason: String) -> TruceError { .invalidRoute(pattern, reason: reason) }
        let bytes = Array(pattern.utf8)
        guard let first = bytes.first else { throw refuse("the pattern is empty") }
        if pattern.unicodeScalars.contains(where: { $0 == " " || $0 == "\t" }) {
            throw refuse("a gitattributes pattern holds no space or tab (Truce reads no quoted patterns)")
        }
        if pattern.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw refuse("the pattern holds a control character")
        }
        switch first {
        case UInt8(ascii: "#"): throw refuse("a gitattributes line starting with '#' is a comment")
        case UInt8(ascii: "!"): throw refuse("negative patterns are not allowed in gitattributes")
        case UInt8(ascii: "\""): throw refuse("Truce reads no quoted gitattributes patterns")
        default: break
        }
        if bytes.starts(with: Array("[attr]".utf8)) { throw refuse("'[attr]' defines a macro, not a pattern") }
        if bytes.last == UInt8(ascii: "/") { throw refuse("a pattern ending in '/' matches only directories, and documents are files") }
    }

    /// A resolver name that `merge=NAME` and `resolver.NAME.OPTION` both hold: ASCII letters, digits, `-` and `_`.
    static func checkRoutedResolver(_ name: String, pattern: String) throws(TruceError) {
        let bytes = Array(name.utf8)
        let isNameByte = { (byte: UInt8) in isASCIIAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") }
        guard let first = bytes.first, first != UInt8(ascii: "-"), bytes.allSatisfy(isNameByte) else {
            throw .invalidRoute(
                pattern,
                reason: "resolver name \(TruceError.quoted(name)) must be ASCII letters, digits, '-' and '_', "
                    + "not starting with '-' (it is written as merge=NAME and resolver.NAME.OPTION)")
        }
    }

    /// `options` as config names and values, sorted by name; git's rules for a variable name, one name per spelling.
    static func routedOptions(
        _ options: [String: String], resolver: String,
        pattern: String
    ) throws(TruceError) -> [(name: String, value: String)] {
        var seen: [String: String] = [:]
        var settings: [(name: String, value: String)] = []
        for (option, value) in options.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            let bytes = Array(option.utf8)
            guard let first = bytes.first, isASCIIAlphanumeric(first), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                bytes.allSatisfy({ isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") })
            else {
                throw .invalidRoute(
                    pattern,
                    reason: "option name \(TruceError.quoted(option)) must start with an ASCII letter "
                        + "and hold only letters, digits and '-', as a git config name does")
            }
            let lowered = String(decoding: bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
            if let other = seen[lowered] {
                throw .invalidRoute(
                    pattern,
                    reason: "options \(TruceError.quoted(other)) and \(TruceError.quoted(option)) are one name to git, "
                        + "which ignores case")
            }
            if value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || (0x7F...0x9F).contains($0.value) }) {
                throw .invalidRoute(pattern, reason: "the value of option \(TruceError.quoted(option)) holds a control character")
            }
            seen[lowered] = option
            settings.append(("resolver.\(resolver).\(lowered)", value))
        }
        return settings
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// `data`, a gitattributes file, with `pattern`'s `merge` setting replaced by `merge=resolver`, compared as bytes.
    ///
    /// Lines of other patterns, comments and spacing stay byte for byte.
    static func attributes(_ data: Data, routing pattern: [UInt8], to resolver: String) -> Data {
        let newline = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
        var lines = data.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var kept: [[UInt8]] = []
        var insertion: Int?
        for line in lines {
            var body = line
            let carriageReturn = body.last == UInt8(ascii: "\r")
            if carriageReturn { body.removeLast() }
            let fields = body.split(whereSeparator: { $0 == space || $0 == tab }).map(Array.init)
            guard let first = fields.first, first == pattern else {
                kept.append(line)
                continue
            }
            let others = fields.dropFirst().filter { !isMergeField($0) }
            if others.count == fields.count - 1 {
                kept.append(line)
            } else if !others.isEmpty {
                kept.append(([pattern] + others).joined(separator: [space]) + (carriageReturn ? [UInt8(ascii: "\r")] : []))
            }
            insertion = kept.count
        }
        let rule = pattern + Array(" merge=\(resolver)".utf8)
        kept.insert(rule, at: insertion ?? kept.count)
        return Data(kept.joined(separator: [newline]) + [newline])
    }

    /// True for a gitattributes field that sets, unsets, unspecifies or names `merge`.
    private static func isMergeField(_ field: [UInt8]) -> Bool {
        let merge = Array("merge".utf8)
        return field == merge || field == [UInt8(ascii: "-")] + merge || field == [UInt8(ascii: "!")] + merge
            || field.starts(with: merge + [UInt8(ascii: "=")])
    }

    /// `data`, a git-config file, with every one of `settings` set as `git config --file` sets it, then read back to check it.
    static func config(_ data: Data, setting settings: [(name: String, value: String)], pattern: String) throws(TruceError) -> Data {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("truce-route-\(UUID().uuidString).config")
        defer { try? FileManager.default.removeItem(at: file) }
        let entries: [ConfigEntry]
        let written: Data
        do {
            try data.write(to: file)
            try Repository.setConfig(settings, inFile: file.path)
            written = try Data(contentsOf: file)
            entries = try Repository.configEntries(inFile: file.path)
        } catch let error as GitError {
            if error.isConfigurationError { throw .invalidConfiguration("\(Routing.configKey): \(error.message)") }
            throw .storeFailure(error)
        } catch {
            throw .storeFailure(TruceError.StoreFailure(operation: "write \(Routing.configKey)", message: "\(error)"))
        }
        for setting in settings {
            let read = entries.last { $0.name.utf8.elementsEqual(setting.name.utf8) }?.value
            guard let read, read.utf8.elementsEqual(setting.value.utf8) else {
                throw .invalidRoute(pattern, reason: "git config does not read back \(setting.name) = \(TruceError.quoted(setting.value))")
            }
        }
        return written
    }
}
