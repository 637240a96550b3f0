#ifndef POSTERN_CCRYPT_SHIM_H
#define POSTERN_CCRYPT_SHIM_H
/* libxcrypt: crypt_r verifies the bcrypt ($2a$, $2b$, $2y$) hashes of imported accounts. */
#include <crypt.h>
#endif
