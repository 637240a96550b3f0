#ifndef POSTERN_COPENSSL_SHIM_H
#define POSTERN_COPENSSL_SHIM_H
/* Only the OpenSSL 3 API: no deprecated calls. */
#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/kdf.h>

/* Swift cannot use the OSSL_PARAM_construct_* macros' results by name easily; these wrap the
   parameter lists this package builds. */
static inline OSSL_PARAM postern_param_utf8(const char *key, char *value) {
    return OSSL_PARAM_construct_utf8_string(key, value, 0);
}
static inline OSSL_PARAM postern_param_end(void) { return OSSL_PARAM_construct_end(); }
#endif
