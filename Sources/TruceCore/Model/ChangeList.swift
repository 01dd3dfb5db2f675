import Foundation

/// Changes in the order appended, held a field at a time (keys as bytes, authors once each): a first sync of a million
/// documents held a `Change` and a key string per version received, 134 MB, to its end.
struct ChangeList: Sendable {
    private var versions = KeyedVersions()
    private var kinds: [Change.Kind] = []
    private var dates: [Date] = []
    /// Each change's author, as a position in `authors`.
    private var authorPositions: [Int32] = []
    private var authors: [String] = []
    /// The position of each author in `authors`, by its bytes: two spellings of one name that Swift calls equal
    /// are two authors, as git sees them.
    private var authorPositionByBytes: [[UInt8]: Int32] = [:]

    init() {}

    init(_ changes: some Sequence<Change>) {
        for change in changes { append(change) }
    }

    var count: Int { kinds.count }
    var isEmpty: Bool { kinds.isEmpty }

    mutating func append(_ change: Change) {
        versions.append(change.key, change.version)
        kinds.append(change.kind)
        dates.append(change.date)
        authorPositions.append(position(of: change.author))
    }

    mutating func append(contentsOf other: ChangeList) {
        guard !isEmpty else {
            self = other
            return
        }
        for index in 0..<other.count { append(other[index]) }
    }

    subscript(position: Int) -> Change {
        Change(
            kind: kinds[position], key: versions.key(at: position), version: versions.version(at: position),
            author: authors[Int(authorPositions[position])], date: dates[position])
    }

    /// Every change as an entry of its own.
    var all: [Change] { (0..<count).map { self[$0] } }

    /// How many documents the changes are of.
    var documentCount: Int { versions.distinctKeyCount }

    private mutating func position(of author: String) -> Int32 {
        // Most changes in a row are by one device: its name is compared, not hashed.
        if let last = authors.last, last.utf8.elementsEqual(author.utf8) { return Int32(authors.count - 1) }
        let bytes = Array(author.utf8)
        if let known = authorPositionByBytes[bytes] { return known }
        authors.append(author)
        authorPositionByBytes[bytes] = Int32(authors.count - 1)
        return Int32(authors.count - 1)
    }
}

extension ChangeList: Codable {
    /// Reads the changes `encode(to:)` writes.
    init(from decoder: Decoder) throws {
        self.init()
        var changes = try decoder.unkeyedContainer()
        while !changes.isAtEnd { append(try changes.decode(Change.self)) }
    }

    /// Writes the list as `Change`s, one at a time: the array of them is never made.
    func encode(to encoder: Encoder) throws {
        var changes = encoder.unkeyedContainer()
        for position in 0..<count { try changes.encode(self[position]) }
    }
}
