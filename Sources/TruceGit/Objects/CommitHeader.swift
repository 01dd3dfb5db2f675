#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Re-implements git's commit header, checked by fsck's rules (fsck-msgids, fsck.c fsck_commit and fsck_ident): byte-compatible with git, listed in TruceGit/README.md.
///
/// Where the fields of a commit's header lie in its raw bytes, found in one pass by git's fsck rules (see
/// `commitHeaderProblem`), or what those rules find wrong.
///
/// One pass over the bytes in place, with no line array and no strings: the checks of a sync scan every incoming
/// commit, a million of them in a first sync of a million documents.
struct CommitHeader {
    /// The tree's 40 hex digits.
    let tree: Range<Int>
    /// Each parent's 40 hex digits, in order.
    let parents: [Range<Int>]
    /// The author's and committer's `Name <email> seconds +hhmm`.
    let author: Range<Int>
    let committer: Range<Int>
    /// Where the blank line that ends the header starts: the message follows it.
    let end: Int

    /// The header of `raw`, or why `git fsck` would refuse the commit (the messages `commitHeaderProblem` gives).
    static func scan(_ raw: UnsafeBufferPointer<UInt8>) -> Result<CommitHeader, CommitHeaderProblem> {
        guard let end = blankLine(in: raw) else { return .failure("its header is unterminated") }
        if memchr(raw.baseAddress!, 0, end) != nil { return .failure("its header holds a NUL byte") }
        var lines = HeaderLines(raw: raw, end: end)
        guard let tree = lines.take("tree ") else { return .failure("it has no tree line first") }
        guard isID(raw[tree]) else { return .failure("its tree id is not 40 lowercase hex digits") }
        var parents: [Range<Int>] = []
        while let parent = lines.take("parent ") {
            guard isID(raw[parent]) else { return .failure("a parent id is not 40 lowercase hex digits") }
            parents.append(parent)
        }
        guard let author = lines.take("author ") else { return .failure("it has no author line after tree and parents") }
        if let problem = identProblem(raw[author]) { return .failure(CommitHeaderProblem("its author \(problem)")) }
        guard let committer = lines.take("committer ") else { return .failure("it has no committer line after the author") }
        if let problem = identProblem(raw[committer]) { return .failure(CommitHeaderProblem("its committer \(problem)")) }
        while let line = lines.next() {
            if startsWith(raw[line], "author ") || startsWith(raw[line], "committer ") {
                return .failure("it has more than one author or committer")
            }
        }
        return .success(CommitHeader(tree: tree, parents: parents, author: author, committer: committer, end: end))
    }

    /// The first `\n` of the first `\n\n` in `raw`, nil when there is none.
    private static func blankLine(in raw: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = raw.baseAddress, raw.count >= 2 else { return nil }
        var start = 0
        while start < raw.count - 1, let found = memchr(base + start, 0x0A, raw.count - 1 - start) {
            let newline = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            if raw[newline + 1] == 0x0A { return newline }
            start = newline + 1
        }
        return nil
    }

    private static func isID(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        digits.count == 40 && digits.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    fileprivate static func startsWith(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return memcmp(bytes.base.baseAddress! + bytes.startIndex, prefix.utf8Start, count) == 0
    }

    /// The seconds of an ident `scan` accepted (`Name <email> SECONDS ZONE`): the digits after its email.
    static func time(ofIdent ident: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        guard let close = ident.lastIndex(of: UInt8(ascii: ">")) else { return nil }
        let digits = ident[(close + 1)...].drop { $0 == UInt8(ascii: " ") }.prefix { (0x30...0x39).contains($0) }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    /// The committer's seconds of the commit whose bytes are `raw`; nil when its header does not scan.
    static func committerTime(of raw: [UInt8]) -> Int64? {
        raw.withUnsafeBufferPointer { bytes in
            guard case .success(let header) = scan(bytes) else { return nil }
            return time(ofIdent: bytes[header.committer])
        }
    }

    /// The largest seconds git's fsck takes, 2^63 - 1, as digits: compared as text with others of as many digits.
    private static let largestDate = Array("9223372036854775807".utf8)

    /// What `git fsck` finds wrong in `Name <email> seconds +hhmm`, nil when nothing.
    private static func identProblem(_ ident: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        let less = UInt8(ascii: "<"), greater = UInt8(ascii: ">"), space = UInt8(ascii: " ")
        var rest = ident
        if rest.first == less { return "has no name before its email" }
        guard let open = rest.firstIndex(where: { $0 == less || $0 == greater }), rest[open] == less else {
            return "has a '>' in its name or no email"
        }
        guard open > rest.startIndex, rest[open - 1] == space else { return "has no space before its email" }
        rest = rest[(open + 1)...]
        guard let close = rest.firstIndex(where: { $0 == less || $0 == greater }), rest[close] == greater else { return "has a bad email" }
        rest = rest[(close + 1)...]
        guard rest.first == space else { return "has no space before its date" }
        rest = rest.dropFirst()
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        let seconds = rest.prefix(while: isDigit)
        if seconds.isEmpty { return "has a bad date" }
        if seconds.count > 1 && seconds.first == UInt8(ascii: "0") { return "has a zero-padded date" }
        // git reads the seconds into an unsigned 64-bit count, and fsck refuses one a signed 64-bit time_t cannot hold
        // (`date_overflows`, badDateOverflow): more than 2^63 - 1, however many digits.
        if seconds.count > 19 || (seconds.count == 19 && Self.largestDate.lexicographicallyPrecedes(seconds)) {
            return "has a date that overflows"
        }
        rest = rest[seconds.endIndex...]
        guard rest.first == space else { return "has a bad date" }
        rest = rest.dropFirst()
        guard rest.count == 5, rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-"), rest.dropFirst().allSatisfy(isDigit) else {
            return "has a bad time zone"
        }
        return nil
    }
}

/// Why `git fsck` would refuse a commit's header, in words.
struct CommitHeaderProblem: Error, ExpressibleByStringLiteral {
    let message: String
    init(_ message: String) { self.message = message }
    init(stringLiteral message: String) { self.message = message }
}

/// The lines of a header (the bytes before its blank line), each as the range of its bytes without the newline.
private struct HeaderLines {
    let raw: UnsafeBufferPointer<UInt8>
    let end: Int
    /// Where the next line starts; past `end` once the last line was taken.
    var start = 0

    init(raw: UnsafeBufferPointer<UInt8>, end: Int) {
        (self.raw, self.end) = (raw, end)
    }

    /// The next line, nil after the last.
    mutating func next() -> Range<Int>? {
        guard start <= end else { return nil }
        let found = memchr(raw.baseAddress! + start, 0x0A, end - start)
        let stop = found.map { UnsafeRawPointer(raw.baseAddress!).distance(to: UnsafeRawPointer($0)) } ?? end
        defer { start = stop + 1 }
        return start..<stop
    }

    /// What follows `field` on the next line when that line starts with it (the line is then taken), else nil.
    mutating func take(_ field: StaticString) -> Range<Int>? {
        let saved = start
        guard let line = next() else { return nil }
        guard CommitHeader.startsWith(raw[line], field) else {
            start = saved
            return nil
        }
        return (line.lowerBound + field.utf8CodeUnitCount)..<line.upperBound
    }
}
