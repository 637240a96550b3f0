import Testing
@testable import PosternCore

@Suite("Template engine")
struct TemplateEngineTests {
    private let all = Set(MailVariable.allCases)

    private func compile(_ source: String, part: TemplatePart = .text, declared: Set<MailVariable>? = nil) throws(TemplateErrors)
        -> CompiledTemplate<MailVariable>
    {
        try CompiledTemplate.compile(source, name: "en/test.\(part.fileExtension)", part: part, declared: declared ?? all, scope: "test")
    }

    private func problems(_ source: String, part: TemplatePart = .text, declared: Set<MailVariable>? = nil) -> [TemplateProblem] {
        do {
            _ = try compile(source, part: part, declared: declared)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func htmlPartEscapesAllFiveSpecialCharacters() throws {
        let template = try compile("<p>{{displayName}}</p>", part: .html)
        let out = template.render(TemplateContext([.displayName: #"<a href="x">'Tom' & Jerry</a>"#]))
        #expect(out == "<p>&lt;a href=&quot;x&quot;&gt;&#39;Tom&#39; &amp; Jerry&lt;/a&gt;</p>")
    }

    @Test func htmlEscapingKeepsNonASCIIText() throws {
        let template = try compile("{{displayName}}", part: .html)
        #expect(template.render(TemplateContext([.displayName: "Jürgen <Ölmühle> 🚀"])) == "Jürgen &lt;Ölmühle&gt; 🚀")
    }

    @Test func textAndSubjectPartsInsertValuesRaw() throws {
        let context = TemplateContext<MailVariable>([.displayName: "<b>A & B</b>"])
        #expect(try compile("Hi {{displayName}}!", part: .text).render(context) == "Hi <b>A & B</b>!")
        #expect(try compile("Hi {{displayName}}!", part: .subject).render(context) == "Hi <b>A & B</b>!")
    }

    @Test func subjectRendersAsOneTrimmedLine() throws {
        let template = try compile("  Reset your\n  {{appName}}   password \n", part: .subject)
        #expect(template.render(TemplateContext([.appName: "Postern"])) == "Reset your Postern password")
    }

    @Test func controlCharactersInValuesBecomeSpaces() throws {
        let template = try compile("[{{displayName}}]")
        #expect(template.render(TemplateContext([.displayName: "a\r\nBcc: x\u{0}\u{7F}\u{85}b"])) == "[a  Bcc: x   b]")
    }

    @Test func absentVariableRendersEmpty() throws {
        #expect(try compile("a{{displayName}}b").render(TemplateContext()) == "ab")
    }

    @Test func sectionShowsOnlyWhenPresentAndNonEmpty() throws {
        let template = try compile("a{{#displayName}}<{{displayName}}>{{/displayName}}b")
        #expect(template.render(TemplateContext([.displayName: "X"])) == "a<X>b")
        #expect(template.render(TemplateContext([.displayName: ""])) == "ab")
        #expect(template.render(TemplateContext()) == "ab")
    }

    @Test func invertedSectionShowsOnlyWhenAbsentOrEmpty() throws {
        let template = try compile("{{^displayName}}there{{/displayName}}{{#displayName}}{{displayName}}{{/displayName}}")
        #expect(template.render(TemplateContext()) == "there")
        #expect(template.render(TemplateContext([.displayName: ""])) == "there")
        #expect(template.render(TemplateContext([.displayName: "Jane"])) == "Jane")
    }

    @Test func nestedSections() throws {
        let template = try compile("{{#link}}L{{#code}}C{{code}}{{/code}}{{^code}}-{{/code}}{{/link}}")
        #expect(template.render(TemplateContext([.link: "x", .code: "1"])) == "LC1")
        #expect(template.render(TemplateContext([.link: "x"])) == "L-")
        #expect(template.render(TemplateContext([.code: "1"])) == "")
    }

    @Test func standaloneTagLinesDisappear() throws {
        let template = try compile("a\n  {{#code}}\ncode: {{code}}\n  {{/code}}  \n{{! note }}\nb\n")
        #expect(template.render(TemplateContext([.code: "1"])) == "a\ncode: 1\nb\n")
        #expect(template.render(TemplateContext()) == "a\nb\n")
    }

    @Test func standaloneLinesWithCRLF() throws {
        let template = try compile("a\r\n{{#code}}\r\n{{code}}\r\n{{/code}}\r\nb")
        #expect(template.render(TemplateContext([.code: "1"])) == "a\r\n1\r\nb")
    }

    @Test func tagsSharingALineAreNotStandalone() throws {
        let template = try compile("{{#code}}x{{/code}}\ny")
        #expect(template.render(TemplateContext([.code: "1"])) == "x\ny")
        #expect(template.render(TemplateContext()) == "\ny")
    }

    @Test func commentsAreDropped() throws {
        #expect(try compile("a{{! {{not a tag}} b").render(TemplateContext()) == "a b")
        #expect(try compile("a{{!comment}}b").render(TemplateContext()) == "ab")
    }

    @Test func spacesInsideTagsAreAllowed() throws {
        #expect(try compile("{{ # code }}{{ code }}{{ / code }}").render(TemplateContext([.code: "9"])) == "9")
    }

    @Test func singleBracesAreText() throws {
        #expect(try compile("a { b } c}} d").render(TemplateContext()) == "a { b } c}} d")
    }

    @Test func unclosedTagReportsLineAndColumn() {
        let found = problems("line one\n  ab {{link\n")
        #expect(found.count == 1)
        #expect(found.first?.code == .unclosedTag)
        #expect(found.first?.templateName == "en/test.txt")
        #expect(found.first?.line == 2)
        #expect(found.first?.column == 6)
    }

    @Test func columnCountsCharactersNotBytes() {
        let found = problems("ü€🚀{{nope}}")
        #expect(found.first?.line == 1)
        #expect(found.first?.column == 4)
    }

    @Test func unclosedSectionPointsAtItsStart() {
        let found = problems("x\n\n   {{#link}}\nabc\n")
        #expect(found.map(\.code) == [.unclosedSection])
        #expect(found.first?.line == 3)
        #expect(found.first?.column == 4)
        #expect(found.first?.description == "en/test.txt:3:4: unclosed section: '{{#link}}' is never closed with '{{/link}}'")
    }

    @Test func mismatchedSectionEnd() {
        let found = problems("{{#link}}\n{{#code}}\n{{/link}}\n{{/code}}")
        #expect(found.map(\.code) == [.mismatchedSection])
        #expect(found.first?.line == 3)
        #expect(found.first?.column == 1)
    }

    @Test func sectionEndWithoutStart() {
        let found = problems("a {{/link}}")
        #expect(found.map(\.code) == [.unexpectedSectionEnd])
        #expect(found.first?.column == 3)
    }

    @Test func unsupportedTagFormsAreInvalid() {
        #expect(problems("{{{link}}}").map(\.code) == [.invalidTag])
        #expect(problems("{{&link}}").map(\.code) == [.invalidTag])
        #expect(problems("{{link.host}}").map(\.code) == [.invalidTag])
        #expect(problems("{{}}").map(\.code) == [.invalidTag])
    }

    @Test func everyUnknownVariableIsReportedWithItsPlace() {
        let found = problems("{{lnk}}\n  {{code}}\n{{#nope}}x{{/nope}}", declared: [.link])
        #expect(found.map(\.code) == [.unknownVariable, .unknownVariable, .unknownVariable])
        #expect(found.map { [$0.line ?? 0, $0.column ?? 0] } == [[1, 1], [2, 3], [3, 1]])
        #expect(found[0].detail.contains("'lnk' is not a template variable"))
        #expect(found[1].detail.contains("'code' is not a variable of test"))
    }

    @Test func contentSlotOnlyInLayouts() throws {
        #expect(problems("{{>content}}").map(\.code) == [.misplacedContentSlot])
        let layout = try CompiledTemplate.compileLayout(
            "<div>{{appName}}\n{{>content}}\n</div>", name: "en/layout.html", part: .html, declared: MailMessageKind.commonVariables)
        let body = try compile("<p>{{link}}</p>\n", part: .html)
        let wrapped = layout.wrapping(body)
        #expect(wrapped.name == "en/test.html")
        #expect(wrapped.render(TemplateContext([.appName: "A&B", .link: "x<y"])) == "<div>A&amp;B\n<p>x&lt;y</p>\n</div>")
    }

    @Test func layoutNeedsExactlyOneContentSlot() {
        for source in ["no slot", "{{>content}}{{>content}}"] {
            #expect(throws: TemplateErrors.self) {
                try CompiledTemplate.compileLayout(source, name: "en/layout.txt", part: .text, declared: MailMessageKind.commonVariables)
            }
        }
    }
}
