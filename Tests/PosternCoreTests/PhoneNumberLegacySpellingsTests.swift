import PosternCore
import Testing

/// The spellings the parser before libphonenumber kept (04a969a stored every digit after `+` as
/// typed), under whose keyed hash a number verified then is found until it is re-keyed.
@Suite("Legacy spellings of a canonical number: what the old parser kept and the new one reads as the number")
struct PhoneNumberLegacySpellingsTests {
    @Test("a German mobile: the trunk prefix kept once or twice, in that order; not three times (16 digits, refused then)")
    func german() throws {
        let number = try PhoneNumber.parse("+49 151 12345678", defaultRegion: nil)
        #expect(number.legacySpellings == ["+49015112345678", "+490015112345678"])
    }

    @Test("the other trunk prefixes the old table knew, and Mexico's mobile 1", arguments: [
        ("+79123456789", "+789123456789"), ("+36201234567", "+3606201234567"), ("+525512345678", "+5215512345678"),
        ("+14155552671", "+114155552671"), ("+33612345678", "+330612345678"),
    ])
    func otherPlans(canonical: String, legacy: String) throws {
        #expect(try PhoneNumber.parse(canonical, defaultRegion: nil).legacySpellings.contains(legacy))
    }

    @Test("every spelling listed is read by the parser as the number itself, and is at most 15 digits", arguments: [
        "+4915112345678", "+14155552671", "+79123456789", "+525512345678", "+36201234567", "+447400123456", "+5491123456789",
        "+33612345678", "+393123456789",
    ])
    func readsBackAsTheNumber(canonical: String) throws {
        let number = try PhoneNumber.parse(canonical, defaultRegion: nil)
        for spelling in number.legacySpellings {
            #expect(spelling != number.e164 && spelling.utf8.count <= 16)
            #expect(try PhoneNumber.parse(spelling, defaultRegion: nil) == number)
        }
    }

    @Test("a spelling that is another number is never listed: Italy keeps its 0, so +39 0… is not +39 …")
    func anotherNumberIsNotASpelling() throws {
        let mobile = try PhoneNumber.parse("+39 312 345 6789", defaultRegion: nil)
        #expect(mobile.legacySpellings.isEmpty)
    }
}
