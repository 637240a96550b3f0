#ifndef POSTERN_CSQLITE_SHIM_H
#define POSTERN_CSQLITE_SHIM_H
#include <sqlite3.h>

/* sqlite3_config is variadic. */
static inline int postern_sqlite3_config_int(int op, int value) { return sqlite3_config(op, value); }
static inline int postern_sqlite3_config_none(int op) { return sqlite3_config(op); }
/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import. */
static inline sqlite3_destructor_type postern_sqlite3_transient(void) { return SQLITE_TRANSIENT; }
#endif
