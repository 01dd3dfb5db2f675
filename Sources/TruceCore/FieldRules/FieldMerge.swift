import Foundation

/// How one field of a JSON document merges: a three-way merge from the base over every head, the same on every replica.
///
/// Written in a rules document as its name (`lww`, `union`, `id=sku`), declared in Swift as the case.
public enum FieldMerge: Sendable, Hashable {
    /// The value of the head with the latest date (its hybrid author date, then the larger version id, as the
    /// current-version rule) among the heads that changed it; the base's when none did.
    case lww
    /// The largest value any head holds (numbers; strings by their bytes): a change that lowers it is dropped.
    case max
    /// The smallest value any head holds.
    case min
    /// A count: the base's value plus every head's change to it (a number).
    case counter
    /// An array of scalars as a set: what any head added stays, what a head removed and no head added again goes.
    case union
    /// A string merged line by line, as `three-way` merges text: edits that overlap are a point for a person.
    case text
    /// Always a point for a person when heads hold different values.
    case person
    /// An object member by member, each by its own rule; what a field gets when no rule names it.
    case members
    /// An array of objects matched by the member `identity` (an id): inserts, deletes, moves and edits element by
    /// element, each element's fields by their own rules.
    case byID(String)

    /// The rule's name in a rules document.
    public var name: String {
        switch self {
        case .lww: "lww"
        case .max: "max"
        case .min: "min"
        case .counter: "counter"
        case .union: "union"
        case .text: "text"
        case .person: "person"
        case .members: "members"
        case .byID(let member): "id=\(member)"
        }
    }

    /// The rule a rules document names, nil for a name no rule has.
    public init?(name: String) {
        switch name {
        case "lww": self = .lww
        case "max": self = .max
        case "min": self = .min
        case "counter": self = .counter
        case "union": self = .union
        case "text": self = .text
        case "person": self = .person
        case "members": self = .members
        default:
            guard name.hasPrefix("id="), name.count > 3 else { return nil }
            self = .byID(String(name.dropFirst(3)))
        }
    }

    /// Every rule a rules document can name, for messages (`id=MEMBER` for `byID`).
    public static let names = ["lww", "max", "min", "counter", "union", "text", "person", "members", "id=MEMBER"]
}
