import Foundation

/// A check of a merged JSON document written in Swift, for what a rules document cannot say: a merge that fails it is
/// not written, and the document goes to a person, whose answer is checked again.
///
/// ```swift
/// let endsAfterStart = DocumentCheck("events/*.json", name: "ends after it starts") { merged in
///     let event = try? JSONDecoder().decode(Event.self, from: merged)
///     return event.map { $0.end >= $0.start } == false ? "it ends before it starts" : nil
/// }
/// var resolvers = ResolverRegistry.standard
/// resolvers.register(StructuredMerge(checks: [endsAfterStart]))
/// ```
public struct DocumentCheck: Sendable {
    /// A gitattributes pattern for the documents it checks.
    public let documents: String
    /// What people read when it fails (`check 'ends after it starts': …`).
    public let name: String
    /// The problem with the merged bytes, nil when there is none.
    public let check: @Sendable (_ merged: Data) -> String?

    public init(_ documents: String, name: String, check: @escaping @Sendable (_ merged: Data) -> String?) {
        self.documents = documents
        self.name = name
        self.check = check
    }
}
