#include "operator/serving/http_server.h"

#include <openssl/ssl.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>

namespace kc::op {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
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

struct HttpServer::Impl {
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::map<std::string, HttpHandler> get_handlers;
  std::map<std::string, HttpHandler> post_handlers;
  std::map<std::string, AsyncHttpHandler> async_post_handlers;
  HttpServerOptions options;
  bool tls = false;
  std::thread thread;
  std::atomic<bool> stopped{false};
  int port = 0;
  std::mutex ctx_mu;
  std::shared_ptr<ssl::context> ctx;  // guarded by ctx_mu; null until SetCertificate

  std::shared_ptr<ssl::context> CurrentContext() {
    std::lock_guard<std::mutex> l(ctx_mu);
    return ctx;
  }

  const AsyncHttpHandler* AsyncHandlerFor(const HttpRequest& req) const {
    if (req.method != "POST") return nullptr;
    auto it = async_post_handlers.find(req.path);
    return it == async_post_handlers.end() ? nullptr : &it->second;
  }

  HttpResponse Dispatch(const HttpRequest& req) {
    const bool is_get = req.method == "GET" || req.method == "HEAD";
    const bool is_post = req.method == "POST";
    const auto& table = is_post ? post_handlers : get_handlers;
    auto it = table.find(req.path);
    if ((!is_get && !is_post) || it == table.end()) {
      if (get_handlers.count(req.path) || post_handlers.count(req.path) ||
          async_post_handlers.count(req.path) || (!is_get && !is_post)) {
        return {405, "application/json", ErrorBody("method " + req.method + " not allowed")};
      }
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
      if (stopped) return;
      if (!ec) {
        if (!tls) {
          std::make_shared<Session<beast::tcp_stream>>(this, beast::tcp_stream(std::move(socket)),
                                                       nullptr)
              ->Begin();
        } else if (auto context = CurrentContext()) {
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              this, beast::ssl_stream<beast::tcp_stream>(std::move(socket), *context), context)
              ->Begin();
        } else {
          beast::error_code ignored;
          socket.close(ignored);  // no certificate yet: nothing to hand-shake with
        }
      }
      Accept();
    });
  }

  template <class Stream>
  struct Session : std::enable_shared_from_this<Session<Stream>> {
    static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
    Session(Impl* server, Stream s, std::shared_ptr<ssl::context> context)
        : server(server), stream(std::move(s)), context(std::move(context)) {}
    Impl* server;
    Stream stream;
    std::shared_ptr<ssl::context> context;  // keeps the handshake's context alive
    beast::flat_buffer buffer;
    std::optional<http::request_parser<http::string_body>> parser;
    std::shared_ptr<http::response<http::string_body>> res;

    beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream); }

    void Begin() {
      Tcp().expires_after(server->options.read_timeout);
      if constexpr (kTls) {
        stream.async_handshake(ssl::stream_base::server,
                               [self = this->shared_from_this()](beast::error_code ec) {
                                 if (ec) return self->Close();
                                 self->Read();
                               });
      } else {
        Read();
      }
    }

    void Read() {
      parser.emplace();
      parser->body_limit(server->options.max_body_bytes);
      Tcp().expires_after(server->options.read_timeout);
      http::async_read(
          stream, buffer, *parser, [self = this->shared_from_this()](beast::error_code ec, size_t) {
            if (!ec) return self->Respond();
            if (ec == http::error::body_limit) {
              return self->Reply(413, "request body larger than " +
                                          std::to_string(self->server->options.max_body_bytes) +
                                          " bytes");
            }
            if (ec == http::error::header_limit) {
              return self->Reply(431, "request headers too large");
            }
            if (ec != http::error::end_of_stream && ec != http::error::partial_message &&
                ec.category() == http::make_error_code(http::error::bad_target).category()) {
              return self->Reply(400, "malformed HTTP request: " + ec.message());
            }
            self->Close();  // closed, timed out, or a transport error
          });
    }

    void Respond() {
      auto& req = parser->get();
      HttpRequest r = ParseTarget(std::string(req.method_string()), std::string(req.target()));
      r.body = std::move(req.body());
      r.content_type = std::string(req[http::field::content_type]);
      r.authorization = std::string(req[http::field::authorization]);
      const unsigned version = req.version();
      const bool keep_alive = req.keep_alive();
      const bool head = req.method() == http::verb::head;
      if (const AsyncHttpHandler* async = server->AsyncHandlerFor(r)) {
        HttpDone done = [self = this->shared_from_this(), version, keep_alive](HttpResponse out) {
          auto* raw = self.get();
          asio::post(raw->stream.get_executor(),
                     [self = std::move(self), out = std::move(out), version, keep_alive]() mutable {
                       self->Write(std::move(out), version, keep_alive, false);
                     });
        };
        try {
          (*async)(std::move(r), std::move(done));
        } catch (const std::exception& e) {
          Write({500, "application/json", ErrorBody(std::string("internal error: ") + e.what())},
                version, false, false);
        }
        return;
      }
      HttpResponse out = server->Dispatch(r);
      Write(std::move(out), version, keep_alive, head);
    }

    // An error answer; the connection closes after it.
    void Reply(int status, const std::string& message) {
      Write({status, "application/json", ErrorBody(message)}, 11, false, false);
    }

    void Write(HttpResponse out, unsigned version, bool keep_alive, bool head) {
      res = std::make_shared<http::response<http::string_body>>(
          static_cast<http::status>(out.status), version);
      res->set(http::field::server, "kernelcache-operator");
      res->set(http::field::content_type, out.content_type);
      res->keep_alive(keep_alive);
      if (!head) res->body() = std::move(out.body);
      res->prepare_payload();
      Tcp().expires_after(server->options.read_timeout);
      http::async_write(stream, *res,
                        [self = this->shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          if (!self->res->keep_alive()) return self->Shutdown();
                          self->Read();
                        });
    }

    // Orderly end: TLS close_notify (bounded by the timeout), then FIN.
    void Shutdown() {
      if constexpr (kTls) {
        Tcp().expires_after(std::chrono::seconds(1));
        stream.async_shutdown(
            [self = this->shared_from_this()](beast::error_code) { self->Close(); });
      } else {
        beast::error_code ignored;
        Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      }
    }

    void Close() {
      beast::error_code ignored;
      Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
      Tcp().socket().close(ignored);
    }
  };
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Listen(const std::string& address, int port,
                                                         const HttpServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
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

StatusOr<std::unique_ptr<HttpServer>> HttpServer::ListenTls(const std::string& address, int port,
                                                            const HttpServerOptions& options) {
  KC_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, Listen(address, port, options));
  server->impl_->tls = true;
  return server;
}

void HttpServer::Handle(const std::string& path, HttpHandler handler) {
  impl_->get_handlers[path] = std::move(handler);
}

void HttpServer::HandlePost(const std::string& path, HttpHandler handler) {
  impl_->post_handlers[path] = std::move(handler);
}

void HttpServer::HandlePostAsync(const std::string& path, AsyncHttpHandler handler) {
  impl_->async_post_handlers[path] = std::move(handler);
}

bool HttpServer::tls() const { return impl_->tls; }

Status HttpServer::SetCertificate(const std::string& cert_chain_pem, const std::string& key_pem) {
  if (!impl_->tls) return FailedPreconditionError("SetCertificate on a plain HTTP server");
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use,
                   ec);
  if (ec || SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
    return InternalError("cannot restrict TLS to 1.2+");
  }
  ctx->use_certificate_chain(asio::buffer(cert_chain_pem), ec);
  if (ec)
    return InvalidArgumentError("serving certificate: not a PEM certificate: " + ec.message());
  ctx->use_private_key(asio::buffer(key_pem), ssl::context::pem, ec);
  if (ec) return InvalidArgumentError("serving key: not a PEM private key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return InvalidArgumentError("serving key does not match the certificate");
  }
  std::lock_guard<std::mutex> l(impl_->ctx_mu);
  impl_->ctx = std::move(ctx);
  return OkStatus();
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

}  // namespace kc::op
