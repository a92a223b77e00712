// HttpServer: a small HTTP/1.1 server (Boost.Beast over Boost.Asio) for the
// operator's endpoints: /healthz, /readyz, /metrics, /v1/resolve.
//
// Contract:
// - Listen() binds at once (port 0 picks a free port; port() tells which),
//   so a bad or busy port fails at start-up with a message naming it.
// - Handle() registers an exact-path handler (before Start()). Unknown paths
//   answer 404 {"error":"no handler for <path>"}; methods other than GET and
//   HEAD answer 405. A handler runs on the server's thread and must not
//   block for long.
// - Keep-alive is honoured; an idle or slow connection is closed after 30 s.
// - Stop() (and the destructor) stops accepting, closes connections and
//   joins the thread.
// Thread-safe for Stop() from any thread.
#pragma once

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
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Splits "/p?a=1&b=x%20y" into path and decoded parameters. Pure.
HttpRequest ParseTarget(const std::string& method, const std::string& target);

class HttpServer {
 public:
  static StatusOr<std::unique_ptr<HttpServer>> Listen(const std::string& address, int port);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void Handle(const std::string& path, HttpHandler handler);
  void Start();
  void Stop();
  int port() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A blocking GET for tests and probes: returns status and body.
struct HttpGetResult {
  int status = 0;
  std::string body;
  std::string content_type;
};
StatusOr<HttpGetResult> HttpGet(const std::string& host, int port, const std::string& target);

}  // namespace kc::op
