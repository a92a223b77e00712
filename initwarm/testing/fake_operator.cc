#include "initwarm/testing/fake_operator.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "initwarm/testing/loopback_server.h"

namespace kc::initwarm::testing {

struct FakeOperator::Impl {
  explicit Impl(ServerAnswer answer)
      : server([answer = std::move(answer)](const ServedRequest&) { return answer; }) {}
  LoopbackServer server;
};

FakeOperator::FakeOperator(unsigned status, std::string body, bool hang)
    : impl_(std::make_unique<Impl>(ServerAnswer{status, std::move(body), hang})) {}

FakeOperator::~FakeOperator() = default;

std::string FakeOperator::url() const { return impl_->server.url(); }

std::vector<SeenRequest> FakeOperator::requests() {
  std::vector<SeenRequest> out;
  for (const ServedRequest& r : impl_->server.requests()) {
    out.push_back(
        {r.method, r.target, r.Header("Authorization"), r.Header("Content-Type"), r.body});
  }
  return out;
}

std::vector<std::string> FakeOperator::targets() {
  std::vector<std::string> out;
  for (const auto& r : requests()) out.push_back(r.target);
  return out;
}

unsigned short ClosedLoopbackPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(
      ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

}  // namespace kc::initwarm::testing
