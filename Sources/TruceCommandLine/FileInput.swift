import Foundation

/// Reads a whole file; '-' is a file name here like any other (commands that take it for standard input check first).
func readFile(_ path: String) throws -> Data { try readFile(bytes: Array(path.utf8)) }

/// Reads a whole file named by the bytes the system passed, which need not be UTF-8.
///
/// Through `open(2)`: Foundation takes file names as `String`, which cannot
/// hold a name that is not UTF-8.
func readFile(bytes path: [UInt8]) throws -> Data {
    let shown = String(decoding: path, as: UTF8.self)
    let handle = try openFile(bytes: path)
    do {
        return try handle.readToEnd() ?? Data()
    } catch {
        throw InputError("cannot read '\(shown)': permission denied or unreadable")
    }
}

/// Opens a file named by the bytes the system passed for reading; a directory or a missing file is bad input.
func openFile(bytes path: [UInt8]) throws -> FileHandle {
    let shown = String(decoding: path, as: UTF8.self)
    func failure(_ reason: String) -> InputError { InputError("cannot read '\(shown)': \(reason)") }
    guard !path.contains(0) else { throw failure("no such file") }
    let descriptor = (path + [0]).withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_RDONLY) }
    guard descriptor >= 0 else {
        switch errno {
        case ENOENT, ENOTDIR: throw failure("no such file")
        case EISDIR: throw failure("it is a directory")
        default: throw failure("permission denied or unreadable")
        }
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw failure("permission denied or unreadable") }
    if status.st_mode & S_IFMT == S_IFDIR { throw failure("it is a directory") }
    return handle
}
