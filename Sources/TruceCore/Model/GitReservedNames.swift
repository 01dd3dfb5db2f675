/// The path segments git treats as `.git`, `.gitmodules` or `.gitattributes` on some file system.
///
/// `git fsck --strict` applies every file system's rules on every platform
/// (HFS+ ignores some invisible code points and folds case; NTFS drops
/// trailing dots and spaces, has `GIT~1` short names and `:` streams, and takes
/// `\` as a separator), and libgit2 refuses the NTFS spellings as tree entries.
/// A key holding such a segment would make a store that fsck rejects or that
/// libgit2 cannot write, so it is refused up front. `.gitmodules` and
/// `.gitattributes` are refused too because fsck judges their content.
/// These are ports of git's `is_hfs_dot_generic`, `is_ntfs_dotgit` and
/// `is_ntfs_dot_generic`, on bytes and unicode scalars.
enum GitReservedNames {
    /// The reserved name `segment` stands for (`.git`, `.gitmodules`, `.gitattributes`), nil when it is an ordinary name.
    static func reservedName(of segment: Substring) -> String? {
        // Every reserved spelling starts with '.' or 'g' once ignorable (non-ASCII) code points are dropped, or has a '\\' part.
        let utf8 = segment.utf8
        if let first = utf8.first, first != UInt8(ascii: "."), lowercased(first) != UInt8(ascii: "g"),
            !utf8.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\\") })
        {
            return nil
        }
        for name in ["git", "gitmodules", "gitattributes"] where isHFSDot(segment, name) { return "." + name }
        let bytes = Array(segment.utf8)
        // fsck reads each part after a backslash as a name of its own, as NTFS would.
        var starts = [0]
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\\") { starts.append(index + 1) }
        for start in starts {
            let part = bytes[start...]
            if isNTFSDotGit(part) { return ".git" }
            if isNTFSDot(part, "gitmodules", shortPrefix: "gi7eba") { return ".gitmodules" }
            if isNTFSDot(part, "gitattributes", shortPrefix: "gi7d29") { return ".gitattributes" }
        }
        return nil
    }

    /// HFS+ ignores these code points in names, so `.gi\u{200C}t` is `.git` there.
    static let hfsIgnorable: Set<UInt32> = [
        0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
        0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF,
    ]

    /// `.` + `name` once HFS-ignorable code points are dropped and ASCII case is folded.
    private static func isHFSDot(_ segment: Substring, _ name: String) -> Bool {
        let folded = segment.unicodeScalars.filter { !hfsIgnorable.contains($0.value) }.map { scalar in
            scalar.isASCII ? UInt32(lowercased(UInt8(scalar.value))) : scalar.value
        }
        return folded == ("." + name).unicodeScalars.map(\.value)
    }

    /// `.git` or `git~1` (any case), then only dots and spaces up to the end, a `\` or a `:`.
    private static func isNTFSDotGit(_ part: ArraySlice<UInt8>) -> Bool {
        let rest: ArraySlice<UInt8>
        if startsCaseInsensitive(part, with: ".git") {
            rest = part.dropFirst(4)
        } else if startsCaseInsensitive(part, with: "git~1") {
            rest = part.dropFirst(5)
        } else {
            return false
        }
        for byte in rest {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: ":") { return true }
            if byte != UInt8(ascii: ".") && byte != UInt8(ascii: " ") { return false }
        }
        return true
    }

    /// `.name`, its 8.3 short name (`gitmod~1`) or a fallback short name (`gi7eba~1`), then only dots and spaces.
    private static func isNTFSDot(_ part: ArraySlice<UInt8>, _ name: String, shortPrefix: String) -> Bool {
        let bytes = Array(part)
        let name = Array(name.utf8), prefix = Array(shortPrefix.utf8)
        func byte(_ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }
        func onlySpacesAndPeriods(from start: Int) -> Bool {
            var index = start
            while true {
                let c = byte(index)
                if c == 0 || c == UInt8(ascii: ":") { return true }
                if c != UInt8(ascii: " ") && c != UInt8(ascii: ".") { return false }
                index += 1
            }
        }
        if byte(0) == UInt8(ascii: "."), startsCaseInsensitive(bytes.dropFirst(), with: String(decoding: name, as: UTF8.self)) {
            return onlySpacesAndPeriods(from: name.count + 1)
        }
        if startsCaseInsensitive(bytes[...], with: String(decoding: name.prefix(6), as: UTF8.self)), byte(6) == UInt8(ascii: "~"),
            (UInt8(ascii: "1")...UInt8(ascii: "4")).contains(byte(7))
        {
            return onlySpacesAndPeriods(from: 8)
        }
        var index = 0, sawTilde = false
        while index < 8 {
            let c = byte(index)
            if c == 0 { return false }
            if sawTilde {
                if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { return false }
            } else if c == UInt8(ascii: "~") {
                index += 1
                if !(UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte(index)) { return false }
                sawTilde = true
            } else if index >= 6 || c & 0x80 != 0 || lowercased(c) != prefix[index] {
                return false
            }
            index += 1
        }
        return onlySpacesAndPeriods(from: index)
    }

    private static func startsCaseInsensitive(_ bytes: ArraySlice<UInt8>, with needle: String) -> Bool {
        bytes.count >= needle.utf8.count && zip(bytes, needle.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
