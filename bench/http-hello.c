/* The ceiling for bench/http: a libmicrohttpd "hello" server with the flags and options
   Sources/PosternServer/HTTPServer.swift uses (internal polling thread on epoll, a thread pool,
   a connection limit, a per-connection timeout, a per-connection memory limit). It answers every
   request with a small JSON body from a buffer it copies, like the Swift server does.
   Usage: http-hello PORT [THREADS [CONNECTION_MEMORY_BYTES]] */
#include <microhttpd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] = "{\"status\":\"ok\"}";

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls) {
  (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
  static int marker;
  if (*req_cls == NULL) { *req_cls = &marker; return MHD_YES; }
  if (*upload_data_size > 0) { *upload_data_size = 0; return MHD_YES; }
  struct MHD_Response *response =
      MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (response == NULL) return MHD_NO;
  MHD_add_response_header(response, "Content-Type", "application/json");
  MHD_add_response_header(response, "Cache-Control", "no-store");
  enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return queued;
}

static void on_signal(int number) { (void)number; }

int main(int argc, char **argv) {
  if (argc < 2) return 64;
  unsigned short port = (unsigned short)atoi(argv[1]);
  unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[2]) : 4;
  size_t memory = argc > 3 ? (size_t)atol(argv[3]) : 32 * 1024;
  struct MHD_Daemon *daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, port, NULL, NULL, answer, NULL,
      MHD_OPTION_THREAD_POOL_SIZE, threads,
      MHD_OPTION_CONNECTION_LIMIT, 1024u,
      MHD_OPTION_CONNECTION_TIMEOUT, 30u,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
      MHD_OPTION_END);
  if (daemon == NULL) return 69;
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  pause();
  MHD_stop_daemon(daemon);
  return 0;
}
