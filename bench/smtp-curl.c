/* bench/smtp's transport reference: libcurl alone sending COUNT messages of SIZE bytes over SMTP,
 * with the options Postern's SMTPTransport sets on its handles, in one of two shapes:
 *
 *   easy  THREADS  one easy handle (one connection, reused) per thread, curl_easy_perform per
 *                  message: Postern's outbox workers' shape, without the outbox around it.
 *   multi THREADS  K easy handles per thread on one multi handle, K transfers in flight: one
 *                  thread driving several connections, as an event loop (and smtp-source) does.
 *
 * usage: smtp-curl easy|multi THREADS K COUNT HOST:PORT SIZE
 * Prints "per_s=N" (messages a second). Exits 1 on the first failed transfer.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int multi_mode, threads, per_thread_handles, count, size;
static char *body;
static char url[128];

struct transfer {
    CURL *easy;
    struct curl_slist *recipients;
    size_t offset;
};

static size_t read_body(char *buffer, size_t item, size_t items, void *context) {
    struct transfer *transfer = context;
    size_t left = (size_t)size - transfer->offset, wanted = item * items;
    size_t n = wanted < left ? wanted : left;
    memcpy(buffer, body + transfer->offset, n);
    transfer->offset += n;
    return n;
}

static size_t discard(char *buffer, size_t item, size_t items, void *context) {
    (void)buffer;
    (void)context;
    return item * items;
}

static void open_transfer(struct transfer *transfer) {
    CURL *easy = curl_easy_init();
    if (!easy) { fprintf(stderr, "curl_easy_init failed\n"); exit(1); }
    transfer->recipients = curl_slist_append(NULL, "<user@example.com>");
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_USE_SSL, (long)CURLUSESSL_NONE);
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_MAIL_FROM, "<no-reply@example.com>");
    curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, transfer->recipients);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE, (long)size);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, read_body);
    curl_easy_setopt(easy, CURLOPT_READDATA, transfer);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer);
    transfer->easy = easy;
    transfer->offset = 0;
}

static void fail(CURLcode code) {
    fprintf(stderr, "smtp-curl: %s\n", curl_easy_strerror(code));
    exit(1);
}

static void send_easy(long messages) {
    struct transfer transfer;
    open_transfer(&transfer);
    for (long i = 0; i < messages; i++) {
        transfer.offset = 0;
        CURLcode code = curl_easy_perform(transfer.easy);
        if (code != CURLE_OK) fail(code);
    }
    curl_easy_cleanup(transfer.easy);
    curl_slist_free_all(transfer.recipients);
}

static void send_multi(long messages) {
    CURLM *multi = curl_multi_init();
    struct transfer *transfers = calloc((size_t)per_thread_handles, sizeof *transfers);
    long started = 0, finished = 0;
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)per_thread_handles);
    for (int k = 0; k < per_thread_handles && started < messages; k++, started++) {
        open_transfer(&transfers[k]);
        curl_multi_add_handle(multi, transfers[k].easy);
    }
    while (finished < messages) {
        int running, queued;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &queued))) {
            if (message->msg != CURLMSG_DONE) continue;
            if (message->data.result != CURLE_OK) fail(message->data.result);
            struct transfer *transfer;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&transfer);
            curl_multi_remove_handle(multi, transfer->easy);
            finished++;
            if (started < messages) {
                transfer->offset = 0;
                curl_multi_add_handle(multi, transfer->easy);
                started++;
            }
        }
        if (finished < messages) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    curl_multi_cleanup(multi);
}

static void *run(void *messages) {
    if (multi_mode) send_multi((long)messages); else send_easy((long)messages);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 7 || (strcmp(argv[1], "easy") && strcmp(argv[1], "multi"))) {
        fprintf(stderr, "usage: smtp-curl easy|multi THREADS K COUNT HOST:PORT SIZE\n");
        return 64;
    }
    multi_mode = strcmp(argv[1], "multi") == 0;
    threads = atoi(argv[2]);
    per_thread_handles = atoi(argv[3]);
    count = atoi(argv[4]);
    size = atoi(argv[6]);
    if (threads < 1 || threads > 64 || per_thread_handles < 1 || count < threads || size < 16) {
        fprintf(stderr, "smtp-curl: THREADS 1-64, K >= 1, COUNT >= THREADS, SIZE >= 16\n");
        return 64;
    }
    snprintf(url, sizeof url, "smtp://%s", argv[5]);
    curl_global_init(CURL_GLOBAL_ALL);
    /* A message of SIZE bytes: a header, then lines of 76 letters. */
    body = malloc((size_t)size);
    for (int i = 0; i < size; i++) body[i] = (i % 78 == 76) ? '\r' : (i % 78 == 77) ? '\n' : (char)('a' + i % 26);
    memcpy(body, "Subject: bench\r\n\r\n", 18);

    pthread_t workers[64];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < threads; i++) {
        long share = count / threads + (i < count % threads ? 1 : 0);
        pthread_create(&workers[i], NULL, run, (void *)share);
    }
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    printf("per_s=%.0f\n", count / seconds);
    return 0;
}
