import Foundation

/// Splits an export file into rows with the line each starts on, so that one broken row is
/// reported by its line and the others still import.
enum ExportFile {
    /// One JSON object of the file, parsed, or the problem.
    struct ObjectRow {
        let line: Int
        let object: Result<[String: Any], ImportProblem>
    }

    /// The objects of a JSON file: the elements of a top-level array, of the first array inside a
    /// top-level object (`{"users": [...]}`, as `firebase auth:export` writes), or a sequence of
    /// top-level objects (JSON Lines). Each element is cut out by bracket depth (strings and
    /// escapes respected) and parsed alone.
    static func objects(_ data: Data) -> [ObjectRow] {
        let bytes = [UInt8](data)
        let elementDepth = elementDepth(bytes)
        var rows: [ObjectRow] = []
        var line = 1
        var depth = 0
        var inString = false
        var escaped = false
        var start: (offset: Int, line: Int)?
        for (offset, byte) in bytes.enumerated() {
            if byte == 0x0A { line += 1 }
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x7B, 0x5B:
                if byte == 0x7B, depth == elementDepth { start = (offset, line) }
                depth += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth < 0 { return rows + [ObjectRow(line: line, object: .failure(ImportProblem("unbalanced brackets")))] }
                if byte == 0x7D, depth == elementDepth, let begun = start {
                    rows.append(parse(bytes[begun.offset...offset], line: begun.line))
                    start = nil
                }
            default: break
            }
        }
        if let begun = start { rows.append(ObjectRow(line: begun.line, object: .failure(ImportProblem("file ends inside a row")))) }
        return rows
    }

    /// The bracket depth at which rows start: 1 for a top-level array, 2 for `{"users": [...]}`,
    /// 0 for JSON Lines.
    private static func elementDepth(_ bytes: [UInt8]) -> Int {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return 0 }
        if bytes[first] == 0x5B { return 1 }
        let afterBrace = bytes[(first + 1)...].drop(while: isSpace)
        return afterBrace.starts(with: Array("\"users\"".utf8)) ? 2 : 0
    }

    private static func parse(_ slice: ArraySlice<UInt8>, line: Int) -> ObjectRow {
        guard let object = try? JSONSerialization.jsonObject(with: Data(slice)) as? [String: Any] else {
            return ObjectRow(line: line, object: .failure(ImportProblem("not valid JSON")))
        }
        return ObjectRow(line: line, object: .success(object))
    }

    /// The records of an RFC 4180 CSV file (quoted fields may hold commas, quotes and newlines),
    /// each with the line it starts on; blank lines are skipped.
    static func csvRecords(_ data: Data) -> [(line: Int, fields: [String])] {
        let text = String(decoding: data, as: UTF8.self)
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var recordLine = 1
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
            field = ""
            recordLine = line
        }
        while let scalar = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if scalar == "\"" {
                    let next = iterator.next()
                    if next == "\"" { field.unicodeScalars.append("\"") } else { quoted = false; pending = next }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"": quoted = true
            case ",":
                fields.append(field)
                field = ""
            case "\r": break
            case "\n":
                line += 1
                endRecord()
            default: field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}
