import Foundation
import Synchronization
import TestSupport

/// One file-system call a traced process made under the traced directory, as `Tests/CrashTracer/tracer.c` records it.
struct TracedCall: Sendable {
    enum Kind: UInt8, Sendable {
        case create = 1
        case truncate, write, sync, rename, unlink, link, makeDirectory, removeDirectory, acknowledge, syncAll, extend
        /// Only with `TRUCE_TRACE_READS=1`, for counting a command's work: an open (path, inode), a read (inode,
        /// length), a directory listed (path), a file mapped (inode, length).
        case open, read, list, map
    }

    let kind: Kind
    /// The call's number in the process, from 1: what `TRUCE_TRACE_STOP` names.
    let sequence: UInt32
    let inode: UInt64
    let secondInode: UInt64
    let offset: Int64
    let length: UInt64
    /// Relative to the traced directory ("." for the directory itself, "" for none: a sync of a file has none);
    /// absolute for a path outside it.
    let path: String
    let secondPath: String
    let data: [UInt8]
}

/// The tracer, built once per test process from its C source with the toolchain's compiler, and the runs it traces.
enum CrashTrace {
    /// The built library, or why it could not be built.
    static let library: Result<String, ReliabilityFailure> = {
        let source = packageRoot.appendingPathComponent("Tests/CrashTracer/tracer.c").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("truce-tracer-\(getpid()).so").path
        guard let compiler = CCompiler.path else { return .failure(ReliabilityFailure("no C compiler to build the tracer")) }
        do {
            let built = try run(compiler, ["-shared", "-fPIC", "-O1", "-o", output, source, "-ldl"])
            guard built.status == 0 else { return .failure(ReliabilityFailure("building the tracer failed: \(built.errorOutput)")) }
        } catch {
            return .failure(ReliabilityFailure("building the tracer failed: \(error)"))
        }
        return .success(output)
    }()

    /// What one traced run left: its exit, its output, and every call it made under `root`, in order.
    struct Run {
        let result: ProcessResult
        let calls: [TracedCall]
    }

    /// Runs `truce arguments` against `store` under the tracer: calls under `root` (the store, by default) are recorded;
    /// with `stop`, the process is killed just before its call numbered `stop` (or, with `pausing`, sleeps there).
    static func truce(
        _ arguments: [String], store: String, root: String? = nil, input: Data = Data(), stop: UInt32? = nil, environment: [String: String] = [:]
    ) throws -> Run {
        let library = try library.get()
        let traceFile = FileManager.default.temporaryDirectory.appendingPathComponent("truce-trace-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: traceFile) }
        var variables = environment.merging(
            ["LD_PRELOAD": library, "TRUCE_TRACE_ROOT": root ?? store, "TRUCE_TRACE_OUT": traceFile]) { $1 }
        if let stop { variables["TRUCE_TRACE_STOP"] = "\(stop)" }
        let result = try TestSupport.truce(arguments, store: store, input: input, environment: variables)
        let recorded = FileManager.default.contents(atPath: traceFile) ?? Data()
        return Run(result: result, calls: try parse(Array(recorded), root: URL(fileURLWithPath: root ?? store).resolvingSymlinksInPath().path))
    }

    /// The records of a trace file.
    static func parse(_ bytes: [UInt8], root: String) throws -> [TracedCall] {
        var calls: [TracedCall] = []
        var offset = 0
        func take<T: FixedWidthInteger>(_: T.Type) throws -> T {
            let size = MemoryLayout<T>.size
            guard offset + size <= bytes.count else { throw ReliabilityFailure("a trace record ends early at byte \(offset)") }
            var value: T = 0
            for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
            offset += size
            return value
        }
        func takeBytes(_ count: Int) throws -> [UInt8] {
            guard offset + count <= bytes.count else { throw ReliabilityFailure("a trace record ends early at byte \(offset)") }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
        func relative(_ path: [UInt8]) -> String {
            let text = String(decoding: path, as: UTF8.self)
            if text == root { return "." }
            return text.hasPrefix(root + "/") ? String(text.dropFirst(root.count + 1)) : text
        }
        while offset < bytes.count {
            guard let kind = TracedCall.Kind(rawValue: try take(UInt8.self)) else { throw ReliabilityFailure("unknown trace record kind") }
            let sequence = try take(UInt32.self), inode = try take(UInt64.self), second = try take(UInt64.self)
            let at = try take(Int64.self), length = try take(UInt64.self)
            let path = relative(try takeBytes(Int(try take(UInt32.self))))
            let secondPath = relative(try takeBytes(Int(try take(UInt32.self))))
            let data = kind == .write || kind == .acknowledge ? try takeBytes(Int(length)) : []
            calls.append(
                TracedCall(
                    kind: kind, sequence: sequence, inode: inode, secondInode: second, offset: at, length: length, path: path,
                    secondPath: secondPath, data: data))
        }
        return calls
    }
}
