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
        var found: Range<Int>?
        var pairStart = query.lowerBound
        let end = query.upperBound
        while pairStart <= end {
            var pairEnd = pairStart
            while pairEnd < end, bytes[pairEnd] != UInt8(ascii: "&") {
                pairEnd += 1
            }
            var equals = pairStart
            while equals < pairEnd, bytes[equals] != UInt8(ascii: "=") {
                equals += 1
            }
            if nameMatches(name, bytes, pairStart..<equals) {
                let value = equals < pairEnd ? (equals + 1)..<pairEnd : pairEnd..<pairEnd
                if let previous = found {
                    if !sameBytes(bytes, previous, value) {
                        return .conflicting
                    }
                } else {
                    found = value
                }
            }
            pairStart = pairEnd + 1
        }
        if let found {
            return .value(found)
        }
        return .absent
    }

    private static func nameMatches(_ name: StaticString, _ bytes: [UInt8], _ range: Range<Int>) -> Bool {
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
