import Foundation
import TruceCore

/// A driver's command line with git's placeholders replaced by values Truce made, never by text from a key or a document.
struct DriverCommand {
    /// The files the driver gets, by name in its working directory: the base (`%O`), the current result (`%A`), the other head (`%B`).
    static let baseFile = "base"
    static let currentFile = "current"
    static let otherFile = "other"

    let markerSize: Int
    /// What `%P` becomes: `document` with the key's extension when that is plain letters and digits.
    let pathName: String
    /// What `%S`, `%X` and `%Y` become: short version ids (hex digits), or `empty` for a missing base.
    let baseLabel: String
    let currentLabel: String
    let otherLabel: String

    init(key: DocumentKey, markerSize: Int, baseLabel: String, currentLabel: String, otherLabel: String) {
        self.markerSize = markerSize
        let fileExtension = key.fileExtension
        // Drivers pick a language by extension (mergiraf does); nothing else of the key reaches the shell.
        let plain = (1...16).contains(fileExtension.count) && fileExtension.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        pathName = plain ? "document.\(fileExtension)" : "document"
        self.baseLabel = baseLabel
        self.currentLabel = currentLabel
        self.otherLabel = otherLabel
    }

    /// `template` with each placeholder replaced as git's `ll_ext_merge` does: `%%` is `%`, an unknown one stays as written.
    ///
    /// File names are bare (they need no quoting, as git's temporary names
    /// need none); `%P`, `%S`, `%X` and `%Y` are single-quoted as git quotes them.
    func expand(_ template: String) -> String {
        var output = ""
        var characters = template.makeIterator()
        while let character = characters.next() {
            guard character == "%" else {
                output.append(character)
                continue
            }
            guard let placeholder = characters.next() else {
                output.append("%")
                break
            }
            switch placeholder {
            case "%": output += "%"
            case "O": output += Self.baseFile
            case "A": output += Self.currentFile
            case "B": output += Self.otherFile
            case "L": output += String(markerSize)
            case "P": output += Self.shellQuoted(pathName)
            case "S": output += Self.shellQuoted(baseLabel)
            case "X": output += Self.shellQuoted(currentLabel)
            case "Y": output += Self.shellQuoted(otherLabel)
            default: output += "%" + String(placeholder)
            }
        }
        return output
    }

    /// git's `sq_quote_buf`: the text in single quotes, each `'` written as `'\''`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
