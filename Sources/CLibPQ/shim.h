#ifndef POSTERN_CLIBPQ_SHIM_H
#define POSTERN_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <postgres_ext.h>

/* The PG_DIAG_* field codes are character-literal macros; fixed-type accessors say what they are. */
static inline int postern_pq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int postern_pq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int postern_pq_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }

/* libpq prints NOTICE and WARNING messages to stderr by default; a library never prints. */
static inline void postern_pq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void postern_pq_silence_notices(PGconn *conn) {
    PQsetNoticeProcessor(conn, postern_pq_ignore_notice, NULL);
}
#endif
