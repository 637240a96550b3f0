#ifndef POSTERN_CPHONENUMBERS_H
#define POSTERN_CPHONENUMBERS_H
#include <stddef.h>

/* libphonenumber (Debian's libphonenumber-dev) is C++: PhoneNumbers.cpp calls its PhoneNumberUtil
   and this header is all Swift sees of it, plain C types only. The calls are thread-safe (the
   library's one PhoneNumberUtil is immutable after its first use) and never throw into Swift. */

#ifdef __cplusplus
extern "C" {
#endif

/* PhoneNumberUtil::ErrorType, and POSTERN_PHONE_FAILED for anything else that went wrong (an
   allocation, a number whose E.164 text would not fit). */
typedef enum {
    POSTERN_PHONE_PARSED = 0,
    POSTERN_PHONE_INVALID_COUNTRY_CODE,
    POSTERN_PHONE_NOT_A_NUMBER,
    POSTERN_PHONE_TOO_SHORT_AFTER_IDD,
    POSTERN_PHONE_TOO_SHORT_NSN,
    POSTERN_PHONE_TOO_LONG_NSN,
    POSTERN_PHONE_FAILED,
} postern_phone_parse_result;

/* PhoneNumberUtil::ValidationResult: whether the length fits the country's numbers. */
typedef enum {
    POSTERN_PHONE_IS_POSSIBLE = 0,
    POSTERN_PHONE_IS_POSSIBLE_LOCAL_ONLY,
    POSTERN_PHONE_LENGTH_INVALID_COUNTRY_CODE,
    POSTERN_PHONE_LENGTH_TOO_SHORT,
    POSTERN_PHONE_LENGTH_INVALID,
    POSTERN_PHONE_LENGTH_TOO_LONG,
} postern_phone_length;

/* PhoneNumberUtil::PhoneNumberType. */
typedef enum {
    POSTERN_PHONE_FIXED_LINE = 0,
    POSTERN_PHONE_MOBILE,
    POSTERN_PHONE_FIXED_LINE_OR_MOBILE,
    POSTERN_PHONE_TOLL_FREE,
    POSTERN_PHONE_PREMIUM_RATE,
    POSTERN_PHONE_SHARED_COST,
    POSTERN_PHONE_VOIP,
    POSTERN_PHONE_PERSONAL_NUMBER,
    POSTERN_PHONE_PAGER,
    POSTERN_PHONE_UAN,
    POSTERN_PHONE_VOICEMAIL,
    POSTERN_PHONE_UNKNOWN,
} postern_phone_type;

/* What the library makes of a number. */
typedef struct {
    /* "+", the calling code and the national significant number, NUL-terminated. */
    char e164[32];
    int calling_code;
    /* The ISO 3166 alpha-2 region whose numbering plan holds the number, "001" for a
       non-geographic entity (+800, +882…), "ZZ" for none. */
    char region[4];
    /* IsValidNumber: the number matches a range of its region's plan. */
    int valid;
    postern_phone_length length;
    postern_phone_type type;
} postern_phone_number;

/* Parses `text` (UTF-8): international when it starts with +, else national in `region`
   (ISO 3166 alpha-2; NULL or "ZZ": none). Fills `out` only when the result is POSTERN_PHONE_PARSED. */
postern_phone_parse_result postern_phone_parse(const char *text, const char *region, postern_phone_number *out);

/* The calling code of `region` (ISO 3166 alpha-2, upper case), or 0 when the library has no
   numbering plan for it. */
int postern_phone_calling_code_for_region(const char *region);

/* The regions that share `calling_code`, the main one first, comma-separated into `out`
   (NUL-terminated). Returns the length the whole list needs without its NUL, 0 for none: when it
   is `capacity` or more, `out` holds a cut list (call again with more room). */
size_t postern_phone_regions_for_calling_code(int calling_code, char *out, size_t capacity);

/* Every region the library has a numbering plan for, comma-separated, sorted; as above. */
size_t postern_phone_supported_regions(char *out, size_t capacity);

#ifdef __cplusplus
}
#endif
#endif
