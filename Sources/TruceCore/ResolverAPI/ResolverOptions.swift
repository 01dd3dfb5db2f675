import Foundation

/// The options config gives one resolver: every `resolver.<name>.<option>` line of the store's config.
public struct ResolverOptions: Sendable, Equatable {
    /// The resolver these options are for.
    public let resolverName: String
    /// Option names lowercased (git config keys are case-insensitive), with their last value.
    public let values: [String: String]

    /// `values` as the options of `resolverName` (config's `resolver.<name>.<option>`).
    public init(resolverName: String, values: [String: String] = [:]) {
        self.resolverName = resolverName
        self.values = Dictionary(values.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    }

    /// The raw value of `option`, nil when config does not set it.
    public subscript(option: String) -> String? { values[option.lowercased()] }

    /// One of `choices` (compared case-insensitively), `default` when unset; a config error otherwise.
    public func choice<Choice: RawRepresentable & CaseIterable>(_ option: String, default defaultValue: Choice) throws(TruceError) -> Choice
    where Choice.RawValue == String {
        guard let text = self[option] else { return defaultValue }
        guard let value = Choice.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            throw invalid(option, text, "expected one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// A whole number within `range`, `default` when unset; a config error otherwise.
    public func integer(_ option: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(TruceError) -> Int {
        guard let text = self[option] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw invalid(option, text, "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A number within `range`, decimals allowed (`0.5`), `default` when unset; a config error otherwise.
    public func number(_ option: String, default defaultValue: Double, in range: ClosedRange<Double>) throws(TruceError) -> Double {
        guard let text = self[option] else { return defaultValue }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw invalid(option, text, "expected a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))")
        }
        return value
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }

    /// The config error for `option = value`.
    public func invalid(_ option: String, _ value: String, _ reason: String) -> TruceError {
        .invalidConfiguration("resolver.\(resolverName).\(option) = \(value): \(reason)")
    }
}
