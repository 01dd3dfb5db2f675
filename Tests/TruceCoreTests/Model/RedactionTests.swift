import Foundation
import TestSupport
import Testing

@testable import TruceCore
@testable import TruceGit

/// A remote's password never shows, however an app prints the error a sync throws.
@Suite(.timeLimit(.minutes(10))) struct RedactionTests {
    @Test func aSyncErrorPrintedAnyWayShowsNoPassword() throws {
        let test = try TestStore()
        let port = try freeLoopbackPort()
        let secret = "s3cret-pw"
        do {
            _ = try test.store.sync(with: "http://ada:\(secret)@127.0.0.1:\(port)/hub.git")
            Issue.record("a sync with nothing listening on port \(port) succeeded")
        } catch {
            let shown = [error.localizedDescription, error.errorDescription ?? "", "\(error)", String(reflecting: error), String(describing: error)]
            for text in shown { #expect(!text.contains(secret), "password shown: \(text)") }
            #expect(shown.allSatisfy { $0.contains("ada@127.0.0.1") }, "\(shown)")
        }
    }

    @Test func aGitErrorNamingAURLShowsNoPassword() {
        let error = GitError(operation: "fetch from https://ada:pw-1@host/x", code: -1, errorClass: 0, message: "https://ada:pw-1@host/x: refused")
        #expect("\(error)" == "fetch from https://ada@host/x: https://ada@host/x: refused")
    }

    @Test func aStoreFailuresPublicFieldsHoldNoPassword() {
        let failure = TruceError.storeFailure(
            GitError(operation: "fetch from https://ada:pw-1@host/x", code: -1, errorClass: 0, message: "https://ada:pw-1@host/x: refused"))
        guard case .storeFailure(let parts) = failure else {
            Issue.record("not a store failure: \(failure)")
            return
        }
        #expect(parts.operation == "fetch from https://ada@host/x")
        #expect(parts.message == "https://ada@host/x: refused")
        #expect(!"\(failure)".contains("pw-1"))
    }
}
