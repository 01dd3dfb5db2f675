/// What a `save` or a `delete` wrote: the new version, and the document's state right after it.
///
/// It reads as the `Version` it holds (`result.id`, `result.isConflict`),
/// so code written when `save` returned a `Version` keeps working; pass
/// `result.version` where a `Version` itself is needed.
@dynamicMemberLookup
public struct SaveResult: Sendable, Hashable {
    /// The version written.
    public let version: Version
    /// The document's state right after the save: `.inConflict` when another writer's version landed beside it.
    public let state: DocumentState

    /// A save's result: `version`, and the document's `state` after it.
    public init(version: Version, state: DocumentState) {
        self.version = version
        self.state = state
    }

    /// The written version's properties, read through: `result.id`, `result.deviceName`, `result.isConflict`…
    public subscript<Value>(dynamicMember keyPath: KeyPath<Version, Value>) -> Value {
        version[keyPath: keyPath]
    }
}
