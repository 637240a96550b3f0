/// Reading `name=value` pairs out of a URL's query, without building a dictionary.
enum QueryParameters {
    /// What looking up one parameter found.
    enum Lookup: Equatable {
        /// The name does not occur.
        case absent
        /// The name occurs (possibly several times, always with the same value); the value's range.
        case value(Range<Int>)
        /// The name occurs with two different values.
        case conflicting
    }

    /// Finds `name` in the query `bytes[query]`. Names are compared after percent-decoding, so
    /// `oob%43ode` cannot smuggle a second code past the check; values are returned raw.
    static func lookup(_ name: StaticString, in bytes: [UInt8], query: Range<Int>) -> Lookup {
        var result = Lookup.absent
        forEachPair(in: bytes, query: query) { key, value in
            if nameMatches(name, bytes, key) {
                record(value, into: &result, bytes)
            }
        }
        return result
    }

    /// Calls `body` with the key and value range of each `key=value` pair of `bytes[query]`, in
    /// one pass; a `#` ends the query (the fragment is not part of it).
    static func forEachPair(in bytes: [UInt8], query: Range<Int>, _ body: (Range<Int>, Range<Int>) -> Void) {
        guard query.lowerBound >= 0, query.upperBound <= bytes.count else { return }
        bytes.withUnsafeBufferPointer { buffer in
            var pairStart = query.lowerBound
            let end = query.upperBound
            while pairStart <= end {
                var index = pairStart
                var equals = -1
                var reachedFragment = false
                while index < end {
                    let byte = buffer[index]
                    if byte == UInt8(ascii: "&") {
                        break
                    }
                    if byte == UInt8(ascii: "#") {
                        reachedFragment = true
                        break
                    }
                    if byte == UInt8(ascii: "="), equals < 0 {
                        equals = index
                    }
                    index += 1
                }
                let keyEnd = equals < 0 ? index : equals
                let value = equals < 0 ? index..<index : (equals + 1)..<index
                body(pairStart..<keyEnd, value)
                if reachedFragment {
                    return
                }
                pairStart = index + 1
            }
        }
    }

    /// Adds one occurrence of a parameter's value to what was found of it so far.
    static func record(_ value: Range<Int>, into result: inout Lookup, _ bytes: [UInt8]) {
        switch result {
        case .absent:
            result = .value(value)
        case .value(let previous):
            if !sameBytes(bytes, previous, value) {
                result = .conflicting
            }
        case .conflicting:
            break
        }
    }

    /// Whether the key `bytes[range]` is `name`, compared after percent-decoding.
    static func nameMatches(_ name: StaticString, _ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        if LinkBytes.equals(bytes, range, name) {
            return true
        }
        guard PercentDecoding.needsDecoding(bytes, range) else { return false }
        let decoded = PercentDecoding.decode(bytes, range)
        return LinkBytes.equals(decoded, 0..<decoded.count, name)
    }

    private static func sameBytes(_ bytes: [UInt8], _ first: Range<Int>, _ second: Range<Int>) -> Bool {
        guard first.count == second.count else { return false }
        var offset = 0
        while offset < first.count {
            if bytes[first.lowerBound + offset] != bytes[second.lowerBound + offset] {
                return false
            }
            offset += 1
        }
        return true
    }
}
