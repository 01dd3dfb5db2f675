/// The names of one document's head references once a batch of heads lands, without a set for the one name most
/// documents have: publishing an import's batch of 131,072 new documents held a set per document, 12 MB.
enum HeadNamesAfter {
    case none
    case one(String)
    case several(Set<String>)

    init(_ names: some Sequence<String>) {
        self = .none
        for name in names { insert(name) }
    }

    var count: Int {
        switch self {
        case .none: 0
        case .one: 1
        case .several(let names): names.count
        }
    }

    mutating func insert(_ name: String) {
        switch self {
        case .none: self = .one(name)
        case .one(let only): if only != name { self = .several([only, name]) }
        case .several(var names):
            // Taken out first, so that the set is not copied to be changed.
            self = .none
            names.insert(name)
            self = .several(names)
        }
    }

    mutating func remove(_ name: String) {
        switch self {
        case .none: break
        case .one(let only): if only == name { self = .none }
        case .several(var names):
            self = .none
            names.remove(name)
            self = .several(names)
        }
    }
}
