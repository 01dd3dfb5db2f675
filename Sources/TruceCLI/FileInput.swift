import Foundation

/// Reads a whole file; '-' is a file name here like any other (commands that take it for standard input check first).
func readFile(_ path: String) throws -> Data {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw InputError("cannot read '\(path)': no such file")
    }
    if isDirectory.boolValue { throw InputError("cannot read '\(path)': it is a directory") }
    guard let data = FileManager.default.contents(atPath: path) else {
        throw InputError("cannot read '\(path)': permission denied or unreadable")
    }
    return data
}
