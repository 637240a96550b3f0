#ifndef POSTERN_CMICROHTTPD_SHIM_H
#define POSTERN_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* The unescape callback: leaves the request's path and query arguments as they were sent (in an
   argument `+` is already a space: internal.c's MHD_parse_arguments_ calls MHD_unescape_plus on
   each key and value before this; the path keeps its `+`), so the server percent-decodes each once (PercentDecoding):
   the path segment by segment, where libmicrohttpd decoded the whole path, which split a
   parameter holding `%2F` and decoded one holding `%25` a second time. */
static inline size_t postern_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

/* Whitespace between a header's name and its colon must be answered 400 (RFC 9112 §5.1): a proxy
   that trims the name frames the body by `Content-Length : 4` where a server that keeps the name
   frames none (request smuggling). libmicrohttpd before 0.9.77.01 (MHD_VERSION 0x00097701; Debian
   12 has 0.9.75) keeps such a line as a header named "Content-Length " unless
   MHD_OPTION_STRICT_FOR_CLIENT is -1 or less: connection.c's process_header_line, the option's one
   effect there (1 would instead refuse spaces in the URI and HTTP/1.1 without Host, and not this).
   From 0x00097701 on the default refuses it, and -1 means "most lenient" (it would ALLOW it), so
   the option is given only to the older versions. RequestHeaders refuses such a name as well. */
#if MHD_VERSION < 0x00097701
#define POSTERN_MHD_HEADER_DISCIPLINE MHD_OPTION_STRICT_FOR_CLIENT, (int)-1,
#else
#define POSTERN_MHD_HEADER_DISCIPLINE
#endif

/* MHD_start_daemon is variadic: this wrapper passes the fixed option set the server uses, ending
   with MHD_OPTION_END. `notify` (may be NULL) hears of every connection opened and closed;
   `per_ip_limit` 0 means no per-IP cap. */
static inline struct MHD_Daemon *postern_mhd_start(
    unsigned int flags, uint16_t port, const struct sockaddr *bind_addr,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify, void *notify_cls,
    unsigned int thread_pool_size, unsigned int connection_limit, unsigned int per_ip_limit,
    unsigned int connection_timeout, size_t connection_memory_limit)
{
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, bind_addr,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_cls,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_UNESCAPE_CALLBACK, postern_mhd_keep_escapes, NULL,
        POSTERN_MHD_HEADER_DISCIPLINE
        MHD_OPTION_END);
}

/* The connection's socket, or -1. */
static inline int postern_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* What the connection-notify callback stored for the connection's whole life, or NULL. */
static inline void *postern_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The response body is copied, so the caller's buffer may go away at once. */
static inline struct MHD_Response *postern_mhd_response_copy(size_t size, const void *buffer) {
    return MHD_create_response_from_buffer(size, (void *)buffer, MHD_RESPMEM_MUST_COPY);
}

/* The peer's socket address, or NULL. */
static inline const struct sockaddr *postern_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}
#endif
