// The C face of libphonenumber's PhoneNumberUtil (see include/CPhoneNumbers.h). Every entry point
// catches what C++ may throw (an allocation failure): an exception must not unwind into Swift.
#include "CPhoneNumbers.h"

#include <algorithm>
#include <cstring>
#include <list>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

namespace {

const PhoneNumberUtil &util() { return *PhoneNumberUtil::GetInstance(); }

// Copies `text` into `out` of `capacity` bytes, NUL-terminated, cut if it must be; returns its
// whole length.
size_t copy_out(const std::string &text, char *out, size_t capacity) {
    if (out != nullptr && capacity > 0) {
        size_t n = std::min(text.size(), capacity - 1);
        std::memcpy(out, text.data(), n);
        out[n] = '\0';
    }
    return text.size();
}

template <typename Container> std::string joined(const Container &items) {
    std::string text;
    for (const auto &item : items) {
        if (!text.empty()) text += ',';
        text += item;
    }
    return text;
}

postern_phone_parse_result parse_result(PhoneNumberUtil::ErrorType error) {
    switch (error) {
    case PhoneNumberUtil::NO_PARSING_ERROR: return POSTERN_PHONE_PARSED;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR: return POSTERN_PHONE_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::NOT_A_NUMBER: return POSTERN_PHONE_NOT_A_NUMBER;
    case PhoneNumberUtil::TOO_SHORT_AFTER_IDD: return POSTERN_PHONE_TOO_SHORT_AFTER_IDD;
    case PhoneNumberUtil::TOO_SHORT_NSN: return POSTERN_PHONE_TOO_SHORT_NSN;
    case PhoneNumberUtil::TOO_LONG_NSN: return POSTERN_PHONE_TOO_LONG_NSN;
    }
    return POSTERN_PHONE_FAILED;
}

postern_phone_length length_of(PhoneNumberUtil::ValidationResult result) {
    switch (result) {
    case PhoneNumberUtil::IS_POSSIBLE: return POSTERN_PHONE_IS_POSSIBLE;
    case PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY: return POSTERN_PHONE_IS_POSSIBLE_LOCAL_ONLY;
    case PhoneNumberUtil::INVALID_COUNTRY_CODE: return POSTERN_PHONE_LENGTH_INVALID_COUNTRY_CODE;
    case PhoneNumberUtil::TOO_SHORT: return POSTERN_PHONE_LENGTH_TOO_SHORT;
    case PhoneNumberUtil::INVALID_LENGTH: return POSTERN_PHONE_LENGTH_INVALID;
    case PhoneNumberUtil::TOO_LONG: return POSTERN_PHONE_LENGTH_TOO_LONG;
    }
    return POSTERN_PHONE_LENGTH_INVALID;
}

postern_phone_type type_of(PhoneNumberUtil::PhoneNumberType type) {
    switch (type) {
    case PhoneNumberUtil::FIXED_LINE: return POSTERN_PHONE_FIXED_LINE;
    case PhoneNumberUtil::MOBILE: return POSTERN_PHONE_MOBILE;
    case PhoneNumberUtil::FIXED_LINE_OR_MOBILE: return POSTERN_PHONE_FIXED_LINE_OR_MOBILE;
    case PhoneNumberUtil::TOLL_FREE: return POSTERN_PHONE_TOLL_FREE;
    case PhoneNumberUtil::PREMIUM_RATE: return POSTERN_PHONE_PREMIUM_RATE;
    case PhoneNumberUtil::SHARED_COST: return POSTERN_PHONE_SHARED_COST;
    case PhoneNumberUtil::VOIP: return POSTERN_PHONE_VOIP;
    case PhoneNumberUtil::PERSONAL_NUMBER: return POSTERN_PHONE_PERSONAL_NUMBER;
    case PhoneNumberUtil::PAGER: return POSTERN_PHONE_PAGER;
    case PhoneNumberUtil::UAN: return POSTERN_PHONE_UAN;
    case PhoneNumberUtil::VOICEMAIL: return POSTERN_PHONE_VOICEMAIL;
    case PhoneNumberUtil::UNKNOWN: return POSTERN_PHONE_UNKNOWN;
    }
    return POSTERN_PHONE_UNKNOWN;
}

}  // namespace

extern "C" postern_phone_parse_result postern_phone_parse(const char *text, const char *region, postern_phone_number *out) {
    if (text == nullptr || out == nullptr) return POSTERN_PHONE_FAILED;
    try {
        const PhoneNumberUtil &phones = util();
        PhoneNumber number;
        const std::string default_region = region != nullptr ? region : "ZZ";
        postern_phone_parse_result result = parse_result(phones.Parse(text, default_region, &number));
        if (result != POSTERN_PHONE_PARSED) return result;
        std::string e164, number_region;
        phones.Format(number, PhoneNumberUtil::E164, &e164);
        phones.GetRegionCodeForNumber(number, &number_region);
        if (e164.size() >= sizeof out->e164 || number_region.size() >= sizeof out->region) return POSTERN_PHONE_FAILED;
        std::memset(out, 0, sizeof *out);
        copy_out(e164, out->e164, sizeof out->e164);
        copy_out(number_region, out->region, sizeof out->region);
        out->calling_code = number.country_code();
        out->valid = phones.IsValidNumber(number) ? 1 : 0;
        out->length = length_of(phones.IsPossibleNumberWithReason(number));
        out->type = type_of(phones.GetNumberType(number));
        return POSTERN_PHONE_PARSED;
    } catch (...) {
        return POSTERN_PHONE_FAILED;
    }
}

extern "C" int postern_phone_calling_code_for_region(const char *region) {
    if (region == nullptr) return 0;
    try {
        // GetCountryCodeForRegion also answers 0 for "001" and "ZZ": only real regions have one.
        return util().GetCountryCodeForRegion(region);
    } catch (...) {
        return 0;
    }
}

extern "C" size_t postern_phone_regions_for_calling_code(int calling_code, char *out, size_t capacity) {
    try {
        std::list<std::string> regions;
        util().GetRegionCodesForCountryCallingCode(calling_code, &regions);
        regions.remove(PhoneNumberUtil::kRegionCodeForNonGeoEntity);
        return copy_out(joined(regions), out, capacity);
    } catch (...) {
        return copy_out("", out, capacity);
    }
}

extern "C" size_t postern_phone_supported_regions(char *out, size_t capacity) {
    try {
        std::set<std::string> regions;
        util().GetSupportedRegions(&regions);
        return copy_out(joined(regions), out, capacity);
    } catch (...) {
        return copy_out("", out, capacity);
    }
}
