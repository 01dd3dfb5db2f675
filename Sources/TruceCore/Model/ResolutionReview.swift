/// The automatic resolutions after a token, oldest first, with what each kept and dropped; and the token to ask from
/// next time. What ``DocumentStore/review(_:since:resolver:)`` returns.
public struct ResolutionReview: Sendable, Encodable {
    /// Each automatic resolution recorded after the token (a person's are not listed), oldest first.
    public let resolutions: [ReviewedResolution]
    /// The token to ask with next time: it stands after the last change read.
    public let token: ChangeHistory.Token

    /// Every value the listed resolutions dropped, oldest first.
    public var droppedValues: [DroppedValue] { resolutions.flatMap(\.droppedValues) }
}
