import Foundation

/// One value an automatic resolution dropped, as `review` lists it: what ``DocumentStore/restore(_:registry:device:)``
/// brings back.
public struct DroppedValue: Sendable, Hashable, Encodable {
    /// The document.
    public let key: DocumentKey
    /// The resolution that dropped it.
    public let resolution: VersionID
    /// Where in the document: a JSON Pointer, a record's key, the resolver's own place name; nil for the whole document.
    public let point: String?
    /// Why the resolution kept another value, in the resolver's words.
    public let rule: String
    /// The value that stayed there, when one head's value did.
    public let kept: ResolutionDecision.Value?
    /// The value dropped: the head it came from, its device and date, and its bytes (cut when long; the head holds it all).
    public let value: ResolutionDecision.Value
    /// A later version that brought it back (`restore`), nil while none has: the newest such version `review` saw.
    public let restoredBy: VersionID?

    /// How `truce review DOC --restore` names this value: the point, `@` and the head's short id (just `@` and the id
    /// for the whole document).
    public var restoreName: String { (point ?? "") + "@" + value.version.short }

    init(
        key: DocumentKey, resolution: VersionID, point: String?, rule: String, kept: ResolutionDecision.Value?,
        value: ResolutionDecision.Value, restoredBy: VersionID? = nil
    ) {
        self.key = key
        self.resolution = resolution
        self.point = point
        self.rule = rule
        self.kept = kept
        self.value = value
        self.restoredBy = restoredBy
    }

    func restored(by version: VersionID) -> DroppedValue {
        DroppedValue(key: key, resolution: resolution, point: point, rule: rule, kept: kept, value: value, restoredBy: version)
    }
}
