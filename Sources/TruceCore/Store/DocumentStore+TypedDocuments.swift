import Foundation

extension DocumentStore {
    /// Saves `value` as a JSON document: sorted keys, two-space indentation, a final line break, so the same value is
    /// the same bytes everywhere; `base` and `date` as `save(_:to:device:base:date:allowingFutureDate:)` takes them.
    /// See ``TypedDocument``.
    @discardableResult
    public func save<Document: TypedDocument>(
        _ value: Document, to key: DocumentKey, device: String? = nil, base: VersionID? = nil, date: Date = Date()
    ) throws(TruceError) -> SaveResult {
        try save(TypedJSON.encode(value), to: key, device: device, base: base, date: date)
    }

    /// The current version of `key` read as `type`; nil when it is a deletion. A document the store does not hold is
    /// `TruceError.documentNotFound`, as for `contents(of:)`; a version that is not such a value is
    /// `TruceError.invalidConfiguration`, naming the key and the type.
    public func read<Document: TypedDocument>(_ type: Document.Type, from key: DocumentKey) throws(TruceError) -> Document? {
        try contents(of: key).map { data throws(TruceError) in try TypedJSON.decode(type, from: data, key: key) }
    }

    /// Writes `type`'s field rules and invariants for the documents `pattern` matches into the synced `.truce/fields`,
    /// in place of the lines it held for `pattern`, after checking that each names a field the type encodes; returns
    /// the version written, nil when the document held these lines already.
    @discardableResult
    public func declareFieldRules<Document: TypedDocument>(of type: Document.Type, for pattern: String, device: String? = nil)
        throws(TruceError) -> Version?
    {
        try RouteChange(access: access).declareFieldRules(try type.rules(for: pattern), for: pattern, author: author(device), date: Date())
    }
}
