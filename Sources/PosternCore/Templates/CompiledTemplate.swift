/// A template compiled once from source text, over one family's variables; rendering it cannot fail.
///
/// Syntax: `{{name}}` inserts a value (HTML-escaped in HTML parts, raw in text and subject parts;
/// nothing when absent); `{{#name}}…{{/name}}` shows its inside when the value is present and not
/// empty, `{{^name}}…{{/name}}` when it is absent or empty; `{{! comment }}` is dropped. A layout
/// also has one `{{>content}}`, where each message's own template goes.
public struct CompiledTemplate<Variable: TemplateVariable>: Sendable, Hashable {
    /// The template's name, e.g. `en/sign-in.html`.
    public let name: String
    /// Which part of a mail the template renders.
    public let part: TemplatePart
    let nodes: [TemplateNode<Variable>]
    private let sizeHint: Int

    init(name: String, part: TemplatePart, nodes: [TemplateNode<Variable>]) {
        self.name = name
        self.part = part
        self.nodes = nodes
        self.sizeHint = Self.estimatedSize(of: nodes)
    }

    /// Compiles `source` as the `part` template `name`, allowing only the variables in `declared`.
    ///
    /// - Parameter scope: who declares the variables, for problem messages (e.g. "sign-in").
    /// - Throws: ``TemplateErrors`` with every unknown variable, or the first syntax error
    ///   (unclosed tag, unclosed or mismatched section), each with name, line and column.
    public static func compile(
        _ source: String, name: String, part: TemplatePart, declared: Set<Variable>, scope: String
    ) throws(TemplateErrors) -> CompiledTemplate {
        try compile(source, name: name, part: part, declared: declared, scope: scope, isLayout: false)
    }

    /// Compiles a layout: like ``compile(_:name:part:declared:scope:)`` but needing exactly one `{{>content}}`.
    ///
    /// - Throws: ``TemplateErrors`` as `compile` does, and when the content slot is absent or repeated.
    public static func compileLayout(
        _ source: String, name: String, part: TemplatePart, declared: Set<Variable>
    ) throws(TemplateErrors) -> CompiledTemplate {
        try compile(source, name: name, part: part, declared: declared, scope: "layouts", isLayout: true)
    }

    private static func compile(
        _ source: String, name: String, part: TemplatePart, declared: Set<Variable>, scope: String,
        isLayout: Bool
    ) throws(TemplateErrors) -> CompiledTemplate {
        var parser = TemplateParser<Variable>(
            source: source, templateName: name, part: part, declared: declared, scope: scope,
            allowsContentSlot: isLayout)
        let nodes = parser.parse()
        var problems = parser.problems
        if isLayout, nodes != nil, parser.contentSlots != 1 {
            problems.append(
                TemplateProblem(
                    .misplacedContentSlot, templateName: name,
                    detail: "a layout needs exactly one '{{>content}}', found \(parser.contentSlots)"))
        }
        guard let nodes, problems.isEmpty else { throw TemplateErrors(problems: problems) }
        return CompiledTemplate(name: name, part: part, nodes: nodes)
    }

    /// Every variable the template uses, in sections or as values.
    public var variables: Set<Variable> {
        var found = Set<Variable>()
        Self.collectVariables(nodes, into: &found)
        return found
    }

    /// This layout with `body` put where its `{{>content}}` is; named and typed as `body`.
    func wrapping(_ body: CompiledTemplate) -> CompiledTemplate {
        CompiledTemplate(name: body.name, part: body.part, nodes: Self.substitute(nodes, content: body.nodes))
    }

    /// The template rendered with `context`; a subject comes out as one line, spaces collapsed.
    public func render(_ context: TemplateContext<Variable>) -> String {
        var out = ""
        out.reserveCapacity(sizeHint)
        Self.append(nodes, context: context, to: &out)
        return part == .subject ? Self.singleLine(out) : out
    }

    // MARK: Internals

    private static func append(_ nodes: [TemplateNode<Variable>], context: TemplateContext<Variable>, to out: inout String) {
        for node in nodes {
            switch node {
            case .text(let text):
                out.append(text)
            case .value(let variable, let escaped):
                guard let value = context[variable] else { continue }
                if escaped { HTMLEscaping.append(value, to: &out) } else { out.append(value) }
            case .section(let variable, let inverted, let children):
                if context.isShown(variable) != inverted {
                    append(children, context: context, to: &out)
                }
            case .content:
                continue
            }
        }
    }

    /// `text` with every run of whitespace (line breaks included) made one space, and trimmed.
    static func singleLine(_ text: String) -> String {
        asciiSingleLine(text) ?? scalarSingleLine(text)
    }

    /// ``singleLine(_:)`` for any text, scalar by scalar.
    static func scalarSingleLine(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || ControlCharacters.isControl(scalar) {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            out.append(scalar)
        }
        return String(out)
    }

    /// ``singleLine(_:)`` for a text that is all ASCII (every subject of the bundled templates),
    /// on its bytes: there the whitespace and control characters are the bytes below `!` and DEL.
    /// Nil for any other text. The same result as ``scalarSingleLine(_:)``. Walking the scalars and
    /// asking each for its Unicode properties was 1 % of an outbox drain's time.
    static func asciiSingleLine(_ text: String) -> String? {
        let utf8 = text.utf8
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var pendingSpace = false
        for byte in utf8 {
            guard byte < 0x80 else { return nil }
            if byte < 0x21 || byte == 0x7F {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(0x20)
                pendingSpace = false
            }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func substitute(_ nodes: [TemplateNode<Variable>], content: [TemplateNode<Variable>]) -> [TemplateNode<Variable>] {
        var out: [TemplateNode<Variable>] = []
        for node in nodes {
            switch node {
            case .content:
                out.append(contentsOf: content)
            case .section(let variable, let inverted, let children):
                out.append(.section(variable, inverted: inverted, children: substitute(children, content: content)))
            case .text, .value:
                out.append(node)
            }
        }
        return out
    }

    private static func collectVariables(_ nodes: [TemplateNode<Variable>], into found: inout Set<Variable>) {
        for node in nodes {
            switch node {
            case .value(let variable, _):
                found.insert(variable)
            case .section(let variable, _, let children):
                found.insert(variable)
                collectVariables(children, into: &found)
            case .text, .content:
                continue
            }
        }
    }

    private static func estimatedSize(of nodes: [TemplateNode<Variable>]) -> Int {
        nodes.reduce(0) { total, node in
            switch node {
            case .text(let text): total + text.utf8.count
            case .value: total + 48
            case .section(_, _, let children): total + estimatedSize(of: children)
            case .content: total
            }
        }
    }
}
