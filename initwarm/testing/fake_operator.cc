#include "initwarm/testing/fake_operator.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace kc::initwarm::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct FakeOperator::Impl {
  struct Conn {
    explicit Conn(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
  };

  Impl(unsigned status, std::string body, bool hang)
      : status(status), body(std::move(body)), hang(hang), acceptor(ioc) {}

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec) return;
      auto c = std::make_shared<Conn>(std::move(s));
      http::async_read(c->stream, c->buf, c->req, [this, c](beast::error_code ec2, std::size_t) {
        if (ec2) return;
        {
          std::lock_guard<std::mutex> l(mu);
          seen.push_back({std::string(c->req.method_string()), std::string(c->req.target()),
                          std::string(c->req[http::field::authorization]),
                          std::string(c->req[http::field::content_type]), c->req.body()});
        }
        if (hang) {
          held.push_back(c);  // keep the connection open, never answer
          return;
        }
        c->res.result(status);
        c->res.version(11);
        c->res.set(http::field::content_type, "application/json");
        c->res.body() = body;
        c->res.prepare_payload();
        http::async_write(c->stream, c->res, [c](beast::error_code, std::size_t) {
          beast::error_code ignored;
          c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        });
      });
      Accept();
    });
  }

  unsigned status;
  std::string body;
  bool hang;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  unsigned short port = 0;
  std::thread thread;
  std::mutex mu;
  std::vector<SeenRequest> seen;
  std::vector<std::shared_ptr<Conn>> held;
};

FakeOperator::FakeOperator(unsigned status, std::string body, bool hang)
    : impl_(std::make_unique<Impl>(status, std::move(body), hang)) {
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->Accept();
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

FakeOperator::~FakeOperator() {
  impl_->ioc.stop();
  impl_->thread.join();
}

std::string FakeOperator::url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

std::vector<SeenRequest> FakeOperator::requests() {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->seen;
}

std::vector<std::string> FakeOperator::targets() {
  std::vector<std::string> out;
  for (const auto& r : requests()) out.push_back(r.target);
  return out;
}

unsigned short ClosedLoopbackPort() {
  asio::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

}  // namespace kc::initwarm::testing
