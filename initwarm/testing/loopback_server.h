// LoopbackServer: an HTTP/1.1 server on 127.0.0.1:0 for the tests of
// initwarm's HTTP clients. A handler, called on the server's one thread in
// the order requests arrive, chooses each answer (or to never answer); every
// request is recorded whole. Linked by tests only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::initwarm::testing {

struct ServedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;
  // The value of header `name` (case-insensitive), "" when absent.
  std::string Header(std::string_view name) const;
};

struct ServerAnswer {
  unsigned status = 200;
  std::string body;
  bool hang = false;  // keep the connection open and never answer
};

class LoopbackServer {
 public:
  using Handler = std::function<ServerAnswer(const ServedRequest&)>;
  explicit LoopbackServer(Handler handler);
  ~LoopbackServer();
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  unsigned short port() const;
  std::string url() const;  // http://127.0.0.1:<port>
  std::vector<ServedRequest> requests();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kc::initwarm::testing
