#ifndef POSTERN_CCURL_SHIM_H
#define POSTERN_CCURL_SHIM_H
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them, so each argument
   type gets a fixed-type wrapper. */
static inline CURLcode postern_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode postern_curl_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode postern_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode postern_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode postern_curl_setopt_read(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, f); }
static inline CURLcode postern_curl_setopt_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode postern_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode postern_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode postern_curl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
/* The socket of a CURLOPT_CONNECT_ONLY connection, for curl_easy_send and curl_easy_recv. */
static inline CURLcode postern_curl_getinfo_socket(CURL *h, curl_socket_t *v) { return curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, v); }
static inline CURLcode postern_curl_setopt_debug(CURL *h, int (*f)(CURL *, curl_infotype, char *, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, f); }
/* The open-socket callback: curl calls it with each address it resolved, before connecting, so
   the address actually connected to can be checked (a name that resolves to loopback, DNS
   rebinding); it returns the socket or CURL_SOCKET_BAD to refuse the address. */
static inline CURLcode postern_curl_setopt_opensocket(CURL *h, curl_socket_t (*f)(void *, curlsocktype, struct curl_sockaddr *)) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f); }
/* The IP address curl is about to connect to, copied into `out` (room for 16 bytes): 4 bytes for
   IPv4, 16 for IPv6, 0 for another family (then nothing is copied). */
static inline int postern_curl_sockaddr_bytes(const struct curl_sockaddr *address, unsigned char *out) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)&address->addr)->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)&address->addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}
/* The socket curl's own open-socket step would make, close-on-exec; CURL_SOCKET_BAD on failure. */
static inline curl_socket_t postern_curl_open_socket(const struct curl_sockaddr *address) {
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    return fd < 0 ? CURL_SOCKET_BAD : fd;
}
static inline curl_socket_t postern_curl_socket_bad(void) { return CURL_SOCKET_BAD; }
/* CURL_GLOBAL_DEFAULT is a macro expression Swift does not import. */
static inline CURLcode postern_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
#endif
