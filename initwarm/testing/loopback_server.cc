#include "initwarm/testing/loopback_server.h"

#include <strings.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <thread>

namespace kc::initwarm::testing {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string ServedRequest::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n.size() == name.size() && ::strncasecmp(n.data(), name.data(), n.size()) == 0) return v;
  }
  return "";
}

struct LoopbackServer::Impl {
  struct Conn {
    explicit Conn(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
  };

  explicit Impl(Handler h) : handler(std::move(h)), acceptor(ioc) {}

  static ServedRequest Record(const http::request<http::string_body>& req) {
    ServedRequest r{std::string(req.method_string()), std::string(req.target()), {}, req.body()};
    for (const auto& field : req) {
      r.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    return r;
  }

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec) return;
      auto c = std::make_shared<Conn>(std::move(s));
      http::async_read(c->stream, c->buf, c->req, [this, c](beast::error_code ec2, std::size_t) {
        if (ec2) return;
        ServedRequest seen = Record(c->req);
        {
          std::lock_guard<std::mutex> l(mu);
          requests.push_back(seen);
        }
        const ServerAnswer answer = handler(seen);
        if (answer.hang) {
          held.push_back(c);  // keep the connection open, never answer
          return;
        }
        c->res.result(answer.status);
        c->res.version(11);
        c->res.set(http::field::content_type, "application/json");
        c->res.body() = answer.body;
        c->res.prepare_payload();
        http::async_write(c->stream, c->res, [c](beast::error_code, std::size_t) {
          beast::error_code ignored;
          c->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        });
      });
      Accept();
    });
  }

  Handler handler;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  unsigned short port = 0;
  std::thread thread;
  std::mutex mu;
  std::vector<ServedRequest> requests;
  std::vector<std::shared_ptr<Conn>> held;
};

LoopbackServer::LoopbackServer(Handler handler)
    : impl_(std::make_unique<Impl>(std::move(handler))) {
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->Accept();
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

LoopbackServer::~LoopbackServer() {
  impl_->ioc.stop();
  impl_->thread.join();
}

unsigned short LoopbackServer::port() const { return impl_->port; }

std::string LoopbackServer::url() const { return "http://127.0.0.1:" + std::to_string(port()); }

std::vector<ServedRequest> LoopbackServer::requests() {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->requests;
}

}  // namespace kc::initwarm::testing
