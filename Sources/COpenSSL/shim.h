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
/* EVP_PKEY_PUBLIC_KEY is a macro of macros, which Swift does not import. */
static inline int postern_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
/* A parameter builder keeps its keys' names by reference until it is turned into parameters: a
   name Swift passes as a String is gone by then. These are the literals' own, static pointers. */
static inline const char *postern_name_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *postern_name_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }
static inline const char *postern_name_group(void) { return OSSL_PKEY_PARAM_GROUP_NAME; }
static inline const char *postern_name_public_key(void) { return OSSL_PKEY_PARAM_PUB_KEY; }
#endif
