import Foundation
import Truce

/// `truce hub`: an encrypted hub's devices. Syncing with one is `truce sync REMOTE`, as with any hub.
struct HubCommand: Command {
    static let name = "hub"
    static let synopsis =
        "truce hub encrypt REMOTE | join REMOTE | devices REMOTE | approve FINGERPRINT REMOTE | revoke FINGERPRINT REMOTE | recover REMOTE < CODE"
    static let summary = "make an empty git repository an encrypted hub, and say which devices may read it"
    static let options: [Option] = [.json]

    static func run(_ invocation: Invocation) async throws -> ExitCode {
        let action = try invocation.positional(0, "ACTION (encrypt, join, devices, approve, revoke or recover)")
        let takesDevice = action == "approve" || action == "revoke"
        try invocation.rejectExtraPositionals(beyond: takesDevice ? 3 : 2)
        let remote = try invocation.positional(takesDevice ? 2 : 1, "REMOTE")
        let store = try invocation.openStore()
        let devices: EncryptedHubDevices
        switch action {
        case "encrypt":
            devices = try await store.encryptHub(remote)
        case "join":
            devices = try await store.joinEncryptedHub(remote)
        case "devices":
            devices = try await store.encryptedHubDevices(on: remote)
        case "approve", "revoke":
            let fingerprint = try invocation.positional(1, "FINGERPRINT")
            if action == "approve" {
                try await store.approveDevice(fingerprint, on: remote)
            } else {
                try await store.revokeDevice(fingerprint, on: remote)
            }
            devices = try await store.encryptedHubDevices(on: remote)
        case "recover":
            // From standard input, never an argument: a command line shows in `ps` and in the shell's history.
            let code = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            devices = try await store.recoverEncryptedHub(remote, recoveryCode: code.trimmingCharacters(in: .whitespacesAndNewlines))
        default:
            throw UsageError("unknown action '\(action)': expected encrypt, join, devices, approve, revoke or recover")
        }
        if invocation.wantsJSON {
            try invocation.output.json(devices)
            return .success
        }
        invocation.output.out("store \(devices.store)")
        invocation.output.out("this device \(devices.thisDevice)")
        for member in devices.members where member != devices.thisDevice {
            invocation.output.out("device \(member)" + (member == devices.recovery ? " (the recovery code)" : ""))
        }
        for asking in devices.asking where action != "join" { invocation.output.out("asking to join \(asking)") }
        if action == "join" {
            invocation.output.out(
                "asked to join: on a device of the store, check that it shows store \(devices.store), then run 'truce hub approve \(devices.thisDevice) REMOTE'"
            )
        }
        if let code = devices.recoveryCode {
            invocation.output.out("recovery code (print it, keep it offline; 'truce hub recover REMOTE' reads it from standard input):")
            invocation.output.out(code)
        }
        return .success
    }
}
