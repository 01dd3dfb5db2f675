#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A save log operation failed: what was attempted on which file, and why.
package struct SaveLogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was attempted, with the file: "fdatasync /store/truce-saves.log".
    package let operation: String
    /// Why it failed: the system's reason, or what was wrong with the file.
    package let message: String
    /// The system's error number when a system call failed, else 0.
    package let errorNumber: Int32

    package init(operation: String, message: String, errorNumber: Int32 = 0) {
        (self.operation, self.message, self.errorNumber) = (operation, message, errorNumber)
    }

    /// The error of the system call that just failed, with the system's reason (`errno`).
    static func system(_ operation: String) -> SaveLogError {
        let number = errno
        return SaveLogError(operation: operation, message: String(cString: strerror(number)), errorNumber: number)
    }

    package var description: String { "\(operation): \(message)" }
}
