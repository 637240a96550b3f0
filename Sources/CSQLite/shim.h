#ifndef POSTERN_CSQLITE_SHIM_H
#define POSTERN_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stdint.h>

/* sqlite3_config is variadic. */
static inline int postern_sqlite3_config_int(int op, int value) { return sqlite3_config(op, value); }
static inline int postern_sqlite3_config_none(int op) { return sqlite3_config(op); }
/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import. */
static inline sqlite3_destructor_type postern_sqlite3_transient(void) { return SQLITE_TRANSIENT; }

/* The writer's WAL hook (Sources/PosternStore/WALCheckpointer.swift): `state[0]` is the WAL size
   in frames at which a commit checkpoints (PASSIVE, as wal_autocheckpoint does), `state[1]` gets
   the frames the last commit left in the WAL, for the writer to see whether the WAL keeps growing
   (a PASSIVE checkpoint gives up at once when another connection's checkpoint holds the lock). */
static int postern_wal_hook(void *context, sqlite3 *db, const char *name, int frames) {
    int *state = (int *)context;
    state[1] = frames;
    if (frames >= state[0]) {
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
    }
    return SQLITE_OK;
}
static inline void postern_sqlite3_bounded_wal(sqlite3 *db, int *state) {
    sqlite3_wal_hook(db, postern_wal_hook, state);
}
#endif
