// HttpServer: a small HTTP/1.1 server (Boost.Beast over Boost.Asio) for the
// operator's endpoints: /healthz, /readyz, /metrics, /v1/resolve, and (over
// HTTPS) the admission webhooks.
//
// Contract:
// - Listen() binds at once (port 0 picks a free port; port() tells which),
//   so a bad or busy port fails at start-up with a message naming it.
//   ListenTls() does the same for HTTPS: TLS 1.2 and 1.3 only (OpenSSL);
//   handshakes fail until SetCertificate() gave it a certificate.
// - SetCertificate(chain, key) (PEM, any thread, any time) checks the pair
//   and swaps it in atomically: handshakes that start afterwards use it,
//   connections already open keep theirs; nothing restarts or drops.
// - Handle() registers an exact-path GET/HEAD handler, HandlePost() a POST
//   handler that receives the body (before Start()). Unknown paths answer
//   404 {"error":"no handler for <path>"}; a method the path has no handler
//   for answers 405. A handler runs on the server's thread and must not
//   block for long: one that must wait (an API call) is registered with
//   HandlePostAsync() and answers through its `done` callback from any
//   thread, while the server goes on serving other connections. `done`
//   must be called (or dropped) before Stop(): a work pool that holds it
//   is stopped first.
// - Limits (HttpServerOptions): a body over max_body_bytes answers 413, a
//   request that is not HTTP answers 400, both with {"error": ...} and the
//   connection closed. Reading a request (and the TLS handshake) must finish
//   within read_timeout, else the connection is closed; connections are
//   served concurrently, so a slow or idle client never delays another.
// - Keep-alive is honoured.
// - Stop() (and the destructor) stops accepting, closes connections and
//   joins the thread.
// Thread-safe for Stop() and SetCertificate() from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"

namespace kc::op {

struct HttpRequest {
  std::string method;                        // "GET"
  std::string path;                          // "/v1/resolve" (no query)
  std::map<std::string, std::string> query;  // decoded query parameters
  std::string body;                          // POST only
  std::string content_type;                  // the request's Content-Type
  std::string authorization;                 // the request's Authorization header
};

struct HttpServerOptions {
  size_t max_body_bytes = 3 * 1024 * 1024;  // larger bodies answer 413
  // Per request (headers and body) and per TLS handshake.
  std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Answers by calling `done` once, from any thread; the connection waits.
using HttpDone = std::function<void(HttpResponse)>;
using AsyncHttpHandler = std::function<void(HttpRequest, HttpDone done)>;

// Splits "/p?a=1&b=x%20y" into path and decoded parameters. Pure.
HttpRequest ParseTarget(const std::string& method, const std::string& target);

class HttpServer {
 public:
  static StatusOr<std::unique_ptr<HttpServer>> Listen(const std::string& address, int port,
                                                      const HttpServerOptions& options = {});
  static StatusOr<std::unique_ptr<HttpServer>> ListenTls(const std::string& address, int port,
                                                         const HttpServerOptions& options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Handle(const std::string& path, HttpHandler handler);
  void HandlePost(const std::string& path, HttpHandler handler);
  void HandlePostAsync(const std::string& path, AsyncHttpHandler handler);
  // HTTPS servers only (FailedPrecondition otherwise); InvalidArgument when
  // the PEM does not parse or the key does not match the certificate (the
  // previous pair stays in use).
  Status SetCertificate(const std::string& cert_chain_pem, const std::string& key_pem);
  bool tls() const;
  void Start();
  void Stop();
  int port() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kc::op
