#ifndef POSTERN_CIDN2_SHIM_H
#define POSTERN_CIDN2_SHIM_H
#include <idn2.h>

/* UTS #46 non-transitional processing (IDNA2008 with the mapping browsers use: upper case,
   full-width forms, ideographic full stops), NFC first. The flag macros are enum values that
   Swift imports as Int32; this keeps the combination in one place. */
static inline int postern_idn2_lookup(const char *input, char **output) {
    return idn2_lookup_u8((const uint8_t *)input, (uint8_t **)output, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
}
#endif
