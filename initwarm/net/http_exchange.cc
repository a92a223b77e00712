#include "initwarm/net/http_exchange.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace kc::initwarm {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

http::verb VerbOf(const std::string& method) {
  const http::verb verb = http::string_to_verb(method);
  switch (verb) {
    case http::verb::post:
    case http::verb::put:
    case http::verb::patch:
    case http::verb::delete_:
      return verb;
    default:
      return http::verb::get;
  }
}

http::request<http::string_body> RequestFor(const core::ResolveUrl& url, const HttpCall& call) {
  const http::verb verb = VerbOf(call.method);
  http::request<http::string_body> req{verb, call.target, 11};
  req.set(http::field::host, url.host);
  req.set(http::field::user_agent, "kernelcache-initwarm");
  req.set(http::field::accept, "application/json");
  if (!call.authorization.empty()) req.set(http::field::authorization, call.authorization);
  if (verb == http::verb::post || !call.body.empty()) {
    req.set(http::field::content_type,
            call.content_type.empty() ? "application/json" : call.content_type);
    req.body() = call.body;
  }
  for (const auto& [name, value] : call.headers) req.set(name, value);
  req.prepare_payload();
  return req;
}

// A failed exchange as a Status: DeadlineExceeded when the guard fired or a
// stage timed out, else Unavailable naming the stage.
Status TransportError(const std::string& where, const std::string& hint, beast::error_code failure,
                      bool timed_out, const std::string& stage, std::chrono::milliseconds timeout) {
  if (timed_out || failure == beast::error::timeout) {
    return DeadlineExceededError(where + ": no answer within " + std::to_string(timeout.count()) +
                                 " ms" + hint);
  }
  return UnavailableError(where + ": " + stage + ": " + failure.message() + hint);
}

}  // namespace

std::string HttpWhere(const core::ResolveUrl& url, const HttpCall& call) {
  return call.method + " http://" + url.host + ":" + url.port + call.target;
}

StatusOr<HttpReply> HttpExchange(const core::ResolveUrl& url, const HttpCall& call,
                                 std::chrono::milliseconds timeout) {
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  http::request<http::string_body> req = RequestFor(url, call);
  http::response<http::string_body> res;
  beast::error_code failure;
  std::string stage = "resolve host";

  // One timer bounds the whole exchange; the stream's own timer covers
  // connect/write/read, this one also covers name resolution.
  asio::steady_timer guard(ioc, timeout);
  bool timed_out = false;
  guard.async_wait([&](beast::error_code ec) {
    if (ec) return;  // cancelled: the exchange finished first
    timed_out = true;
    resolver.cancel();
    stream.cancel();
  });
  auto fail = [&](beast::error_code ec, const char* what) {
    failure = ec;
    stage = what;
    guard.cancel();
  };
  stream.expires_after(timeout);
  resolver.async_resolve(
      url.host, url.port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
        if (ec) return fail(ec, "resolve host");
        stream.async_connect(results, [&](beast::error_code ec2, const tcp::endpoint&) {
          if (ec2) return fail(ec2, "connect");
          http::async_write(stream, req, [&](beast::error_code ec3, std::size_t) {
            if (ec3) return fail(ec3, "send request");
            http::async_read(stream, buffer, res, [&](beast::error_code ec4, std::size_t) {
              if (ec4) return fail(ec4, "read response");
              guard.cancel();
              beast::error_code ignored;
              stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
            });
          });
        });
      });
  ioc.run();
  if (failure) {
    return TransportError(HttpWhere(url, call), call.unreachable_hint, failure, timed_out, stage,
                          timeout);
  }
  return HttpReply{res.result_int(), std::move(res.body())};
}

Status TcpConnect(const core::ResolveUrl& url, std::chrono::milliseconds timeout) {
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::error_code failure;
  std::string stage = "resolve host";
  asio::steady_timer guard(ioc, timeout);
  bool timed_out = false;
  guard.async_wait([&](beast::error_code ec) {
    if (ec) return;
    timed_out = true;
    resolver.cancel();
    stream.cancel();
  });
  resolver.async_resolve(
      url.host, url.port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
        if (ec) {
          failure = ec;
          guard.cancel();
          return;
        }
        stage = "connect";
        stream.async_connect(results, [&](beast::error_code ec2, const tcp::endpoint&) {
          failure = ec2;
          guard.cancel();
          beast::error_code ignored;
          stream.socket().close(ignored);
        });
      });
  ioc.run();
  if (!failure && !timed_out) return OkStatus();
  return TransportError("tcp://" + url.host + ":" + url.port, "", failure, timed_out, stage,
                        timeout);
}

Status StatusForHttp(const std::string& what, const HttpReply& reply) {
  std::string why;
  auto j = nlohmann::json::parse(reply.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
    why = j["error"].get<std::string>();
  } else {
    why = reply.body.substr(0, 200);
  }
  const unsigned code = reply.status;
  std::string msg = what + " answered HTTP " + std::to_string(code) + ": " + why;
  if (code == 404) return NotFoundError(msg);
  if (code == 400) return InvalidArgumentError(msg);
  if (code == 401) return UnauthenticatedError(msg);
  if (code == 403) return PermissionDeniedError(msg);
  if (code >= 500) return UnavailableError(msg);
  return Status(StatusCode::kUnknown, msg);
}

}  // namespace kc::initwarm
