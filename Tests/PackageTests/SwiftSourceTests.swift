import Testing

/// The reading the package's rules rely on: comments and strings blanked, bodies found.
@Suite struct SwiftSourceTests {
    @Test func commentsAndStringsAreBlankedAndCodeIsKept() {
        let text = """
            let a = "if \\(b ? "guard" : c) for" // while
            /* switch /* nested */ repeat */ let d = #"catch "x" "#
            let e = \"\"\"
                for
                \"\"\"
            """
        let code = String(decoding: SwiftSource(path: "x", text: text).code, as: UTF8.self)
        let words = code.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init)
        #expect(words == ["let", "a", "let", "d", "let", "e"])
        #expect(code.utf8.count == text.utf8.count)
        #expect(code.split(separator: "\n", omittingEmptySubsequences: false).count == 5)
    }

    @Test func aDeclarationsBodyIsFoundPastItsSignature() {
        let text = """
            extension S {
                /// Doc with { a brace.
                public func f(
                    _ a: Int, b: ((Int) -> Void)? = nil
                ) throws -> [Int: String] {
                    if a > 0 { return [:] }
                    return [1: "}"]
                }
                public var g: Int { 1 }
                public let h = 2
            }
            """
        let found = SwiftSource(path: "x", text: text).declarations("public")
        #expect(found.map(\.line) == [3, 9])
        #expect(found.first?.body.count == 2)
        #expect(found.last?.body == [" 1 "])
    }
}
