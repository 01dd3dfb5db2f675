/// What opening a store does with its directory (`DocumentStore.OpeningMode`).
public enum StoreOpeningMode: Sendable, Hashable {
    /// Opens the store in the directory, creating one when the directory is missing or empty (or holds a creation
    /// that was cut short). A directory that holds anything else is `TruceError.notAStore`: nothing is created in it.
    case openOrCreate
    /// Opens the store in the directory: `TruceError.storeNotFound` when it is missing, `.notAStore` when it holds
    /// something else.
    case openExisting
    /// Creates a store in a new or empty directory and opens it: `TruceError.storeExists` when the directory holds
    /// anything.
    case createNew
}
