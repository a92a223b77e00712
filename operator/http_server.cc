#include "operator/http_server.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace kc::op {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string ErrorBody(const std::string& msg) { return nlohmann::json{{"error", msg}}.dump(); }

}  // namespace

HttpRequest ParseTarget(const std::string& method, const std::string& target) {
  HttpRequest req;
  req.method = method;
  const size_t q = target.find('?');
  req.path = Decode(target.substr(0, q));
  if (q == std::string::npos) return req;
  std::string rest = target.substr(q + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t amp = rest.find('&', pos);
    if (amp == std::string::npos) amp = rest.size();
    std::string pair = rest.substr(pos, amp - pos);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      if (eq == std::string::npos) {
        req.query[Decode(pair)] = "";
      } else {
        req.query[Decode(pair.substr(0, eq))] = Decode(pair.substr(eq + 1));
      }
    }
    pos = amp + 1;
  }
  return req;
}

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::map<std::string, HttpHandler> handlers;
  std::thread thread;
  std::atomic<bool> stopped{false};
  int port = 0;

  HttpResponse Dispatch(const HttpRequest& req) {
    if (req.method != "GET" && req.method != "HEAD") {
      return {405, "application/json", ErrorBody("method " + req.method + " not allowed")};
    }
    auto it = handlers.find(req.path);
    if (it == handlers.end()) {
      return {404, "application/json", ErrorBody("no handler for " + req.path)};
    }
    try {
      return it->second(req);
    } catch (const std::exception& e) {
      return {500, "application/json", ErrorBody(std::string("internal error: ") + e.what())};
    }
  }

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec || stopped) return;
      auto session = std::make_shared<Session>(this, std::move(socket));
      session->Read();
      Accept();
    });
  }

  struct Session : std::enable_shared_from_this<Session> {
    Session(Impl* server, tcp::socket socket) : server(server), stream(std::move(socket)) {}
    Impl* server;
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    std::shared_ptr<http::response<http::string_body>> res;

    void Read() {
      req = {};
      stream.expires_after(std::chrono::seconds(30));
      http::async_read(stream, buffer, req,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) {
                           beast::error_code ignored;
                           self->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
                           return;
                         }
                         self->Respond();
                       });
    }

    void Respond() {
      HttpRequest r = ParseTarget(std::string(req.method_string()), std::string(req.target()));
      HttpResponse out = server->Dispatch(r);
      res = std::make_shared<http::response<http::string_body>>(
          static_cast<http::status>(out.status), req.version());
      res->set(http::field::server, "kernelcache-operator");
      res->set(http::field::content_type, out.content_type);
      res->keep_alive(req.keep_alive());
      if (req.method() != http::verb::head) res->body() = std::move(out.body);
      res->prepare_payload();
      http::async_write(stream, *res, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return;
        if (!self->res->keep_alive()) {
          beast::error_code ignored;
          self->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
          return;
        }
        self->Read();
      });
    }
  };
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Listen(const std::string& address, int port) {
  auto impl = std::make_unique<Impl>();
  beast::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) return InvalidArgumentError("--bind-address: \"" + address + "\" is not an IP address");
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return UnavailableError("cannot listen on " + address + ":" + std::to_string(port) + ": " +
                            ec.message() + " (pick another port)");
  }
  impl->port = impl->acceptor.local_endpoint().port();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::Handle(const std::string& path, HttpHandler handler) {
  impl_->handlers[path] = std::move(handler);
}

void HttpServer::Start() {
  impl_->Accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->ioc.run(); });
}

void HttpServer::Stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  beast::error_code ignored;
  impl_->acceptor.close(ignored);
}

int HttpServer::port() const { return impl_->port; }

StatusOr<HttpGetResult> HttpGet(const std::string& host, int port, const std::string& target) {
  try {
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(10));
    stream.connect(resolver.resolve(host, std::to_string(port)));
    timeval tv{10, 0};  // the sync read below has no other deadline
    setsockopt(stream.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    http::request<http::string_body> req{http::verb::get, target, 11};
    req.set(http::field::host, host);
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return HttpGetResult{static_cast<int>(res.result_int()), res.body(),
                         std::string(res[http::field::content_type])};
  } catch (const std::exception& e) {
    return UnavailableError("GET http://" + host + ":" + std::to_string(port) + target + ": " +
                            e.what());
  }
}

}  // namespace kc::op
