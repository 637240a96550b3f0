#ifndef POSTERN_CCURL_SHIM_H
#define POSTERN_CCURL_SHIM_H
#include <curl/curl.h>

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
static inline CURLcode postern_curl_setopt_debug(CURL *h, int (*f)(CURL *, curl_infotype, char *, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, f); }
/* CURL_GLOBAL_DEFAULT is a macro expression Swift does not import. */
static inline CURLcode postern_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
#endif
