// FakeOperator: a one-route HTTP server on 127.0.0.1:0 (a LoopbackServer)
// answering every request with a fixed status and body (or, with hang,
// never answering), recording each request it saw. For the tests of
// initwarm's operator clients (resolve, miss reports); linked by tests only.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kc::initwarm::testing {

struct SeenRequest {
  std::string method;
  std::string target;
  std::string authorization;
  std::string content_type;
  std::string body;
};

class FakeOperator {
 public:
  FakeOperator(unsigned status, std::string body, bool hang = false);
  ~FakeOperator();
  FakeOperator(const FakeOperator&) = delete;
  FakeOperator& operator=(const FakeOperator&) = delete;

  std::string url() const;
  std::vector<SeenRequest> requests();
  std::vector<std::string> targets();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A loopback port nothing listens on (bound, then closed again).
unsigned short ClosedLoopbackPort();

}  // namespace kc::initwarm::testing
