/// Turns template source into nodes, in one pass over its UTF-8 bytes.
///
/// Section, inverted-section, end, comment and content tags that stand alone on a line take the
/// whole line with them (as in mustache), so text templates can put them on lines of their own.
struct TemplateParser<Variable: TemplateVariable> {
    private enum TagKind {
        case variable, section, invertedSection, sectionEnd, comment, content
    }

    private struct Frame {
        var name: String
        var variable: Variable?
        var inverted: Bool
        var openOffset: Int
        var nodes: [TemplateNode<Variable>] = []
    }

    private let bytes: [UInt8]
    private let templateName: String
    private let part: TemplatePart
    private let declared: Set<Variable>
    private let scope: String
    private let allowsContentSlot: Bool
    private(set) var problems: [TemplateProblem] = []
    private(set) var contentSlots = 0

    /// A parser for `source`; `scope` names the declarer of `declared` in problems ("sign-in").
    init(
        source: String, templateName: String, part: TemplatePart, declared: Set<Variable>,
        scope: String, allowsContentSlot: Bool
    ) {
        self.bytes = Array(source.utf8)
        self.templateName = templateName
        self.part = part
        self.declared = declared
        self.scope = scope
        self.allowsContentSlot = allowsContentSlot
    }

    /// The nodes of the template, or nil after a syntax error (recorded in `problems`).
    mutating func parse() -> [TemplateNode<Variable>]? {
        var stack = [Frame(name: "", variable: nil, inverted: false, openOffset: 0)]
        var position = 0
        var textStart = 0
        var lastTagEnd = 0
        while let open = find(UInt8(ascii: "{"), from: position) {
            guard let close = find(UInt8(ascii: "}"), from: open + 2) else {
                report(.unclosedTag, at: open, "'{{' has no matching '}}'")
                return nil
            }
            var inner = bytes[(open + 2)..<close]
            trimSpaces(&inner)
            let kind: TagKind
            switch inner.first {
            case UInt8(ascii: "#"): kind = .section
            case UInt8(ascii: "^"): kind = .invertedSection
            case UInt8(ascii: "/"): kind = .sectionEnd
            case UInt8(ascii: "!"): kind = .comment
            case UInt8(ascii: ">"): kind = .content
            default: kind = .variable
            }
            if kind != .variable { inner = inner.dropFirst() }
            trimSpaces(&inner)
            let name = String(decoding: inner, as: UTF8.self)

            var tagEnd = close + 2
            var textEnd = open
            if kind != .variable, let (lineStart, lineEnd) = standaloneLine(open: open, tagEnd: tagEnd, lastTagEnd: lastTagEnd) {
                textEnd = lineStart
                tagEnd = lineEnd
            }
            appendText(textStart..<textEnd, to: &stack)
            position = tagEnd
            textStart = tagEnd
            lastTagEnd = tagEnd

            if kind == .comment { continue }
            guard isIdentifier(inner) else {
                report(.invalidTag, at: open, "'{{\(String(decoding: bytes[(open + 2)..<close], as: UTF8.self))}}' is not a variable, section or comment tag")
                continue
            }
            switch kind {
            case .comment:
                continue
            case .variable:
                if let variable = resolve(name, at: open) {
                    append(.value(variable, escaped: part.escapesHTML), to: &stack)
                }
            case .section, .invertedSection:
                stack.append(Frame(name: name, variable: resolve(name, at: open), inverted: kind == .invertedSection, openOffset: open))
            case .sectionEnd:
                guard stack.count > 1, let top = stack.last else {
                    report(.unexpectedSectionEnd, at: open, "'{{/\(name)}}' closes no open section")
                    return nil
                }
                guard top.name == name else {
                    report(.mismatchedSection, at: open, "'{{/\(name)}}' found where '{{/\(top.name)}}' was expected")
                    return nil
                }
                stack.removeLast()
                if let variable = top.variable {
                    append(.section(variable, inverted: top.inverted, children: top.nodes), to: &stack)
                }
            case .content:
                guard allowsContentSlot, name == "content" else {
                    report(.misplacedContentSlot, at: open, "'{{>\(name)}}' is only allowed as '{{>content}}' in a layout")
                    continue
                }
                contentSlots += 1
                append(.content, to: &stack)
            }
        }
        appendText(textStart..<bytes.count, to: &stack)
        if stack.count > 1, let top = stack.last {
            let sigil = top.inverted ? "^" : "#"
            report(.unclosedSection, at: top.openOffset, "'{{\(sigil)\(top.name)}}' is never closed with '{{/\(top.name)}}'")
            return nil
        }
        return stack.first?.nodes ?? []
    }

    // MARK: Pieces

    private mutating func resolve(_ name: String, at offset: Int) -> Variable? {
        let known = declared.sorted().map(\.name).joined(separator: ", ")
        guard let variable = Variable(name: name) else {
            // Not of this family at all (a mail's variable in a page, or a typo).
            report(.unknownVariable, at: offset, "'\(name)' is not a template variable of \(scope) (it has: \(known))")
            return nil
        }
        guard declared.contains(variable) else {
            report(.unknownVariable, at: offset, "'\(name)' is not a variable of \(scope) (it has: \(known))")
            return nil
        }
        return variable
    }

    private func appendText(_ range: Range<Int>, to stack: inout [Frame]) {
        guard !range.isEmpty else { return }
        let text = String(decoding: bytes[range], as: UTF8.self)
        let last = stack.count - 1
        if case .text(let previous)? = stack[last].nodes.last {
            stack[last].nodes[stack[last].nodes.count - 1] = .text(previous + text)
        } else {
            stack[last].nodes.append(.text(text))
        }
    }

    private func append(_ node: TemplateNode<Variable>, to stack: inout [Frame]) {
        stack[stack.count - 1].nodes.append(node)
    }

    /// The start of a `{{` (for `{`) or `}}` (for `}`) at or after `start`.
    private func find(_ brace: UInt8, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == brace && bytes[index + 1] == brace { return index }
            index += 1
        }
        return nil
    }

    /// When the tag at `open..<tagEnd` is alone on its line: where the line starts and where the next begins.
    private func standaloneLine(open: Int, tagEnd: Int, lastTagEnd: Int) -> (Int, Int)? {
        var lineStart = open
        while lineStart > 0 && isBlank(bytes[lineStart - 1]) { lineStart -= 1 }
        guard lineStart == 0 || bytes[lineStart - 1] == UInt8(ascii: "\n") else { return nil }
        guard lineStart >= lastTagEnd else { return nil }
        var after = tagEnd
        while after < bytes.count && isBlank(bytes[after]) { after += 1 }
        if after == bytes.count { return (lineStart, after) }
        if bytes[after] == UInt8(ascii: "\n") { return (lineStart, after + 1) }
        if bytes[after] == UInt8(ascii: "\r") && after + 1 < bytes.count && bytes[after + 1] == UInt8(ascii: "\n") {
            return (lineStart, after + 2)
        }
        return nil
    }

    private func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    private func trimSpaces(_ slice: inout ArraySlice<UInt8>) {
        while let first = slice.first, isBlank(first) { slice = slice.dropFirst() }
        while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
    }

    private func isIdentifier(_ name: ArraySlice<UInt8>) -> Bool {
        guard let first = name.first, isLetter(first) || first == UInt8(ascii: "_") else { return false }
        return name.allSatisfy { isLetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_") }
    }

    private func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private mutating func report(_ code: TemplateProblem.Code, at offset: Int, _ detail: String) {
        let (line, column) = lineAndColumn(of: offset)
        problems.append(TemplateProblem(code, templateName: templateName, line: line, column: column, detail: detail))
    }

    /// 1-based line and column (counted in Unicode scalars) of a byte offset.
    private func lineAndColumn(of offset: Int) -> (Int, Int) {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        var column = 1
        var index = lineStart
        while index < offset && index < bytes.count {
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return (line, column)
    }
}
