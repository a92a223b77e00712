#include "initwarm/resolve_client.h"

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/percent_encode.h"

namespace kc::initwarm {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

Status StatusForHttp(unsigned code, const std::string& body) {
  std::string why;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
    why = j["error"].get<std::string>();
  } else {
    why = body.substr(0, 200);
  }
  std::string msg = "resolve endpoint answered HTTP " + std::to_string(code) + ": " + why;
  if (code == 404) return NotFoundError(msg);
  if (code == 400) return InvalidArgumentError(msg);
  if (code == 401) return UnauthenticatedError(msg);
  if (code == 403) return PermissionDeniedError(msg);
  if (code >= 500) return UnavailableError(msg);
  return Status(StatusCode::kUnknown, msg);
}

class HttpResolver : public Resolver {
 public:
  HttpResolver(std::string base, std::chrono::milliseconds timeout)
      : base_(std::move(base)), timeout_(timeout) {}

  StatusOr<ResolveAnswer> Resolve(const std::string& ns, const std::string& kernelcache,
                                  const std::string& node) override {
    KC_ASSIGN_OR_RETURN(core::ResolveUrl url, core::ParseResolveUrl(base_));
    std::string target = url.prefix + "/v1/resolve?namespace=" + PercentEncode(ns) +
                         "&kernelcache=" + PercentEncode(kernelcache) +
                         "&node=" + PercentEncode(node);
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    beast::flat_buffer buffer;
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, url.host);
    req.set(http::field::user_agent, "kernelcache-initwarm");
    req.set(http::field::accept, "application/json");
    http::response<http::string_body> res;
    beast::error_code failure;
    std::string stage = "resolve host";

    // One timer bounds the whole exchange; the stream's own timer covers
    // connect/write/read, this one also covers name resolution.
    asio::steady_timer guard(ioc, timeout_);
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
    stream.expires_after(timeout_);
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
    const std::string where = "GET http://" + url.host + ":" + url.port + target;
    if (failure) {
      if (timed_out || failure == beast::error::timeout) {
        return DeadlineExceededError(where + ": no answer within " +
                                     std::to_string(timeout_.count()) +
                                     " ms; is the kernelcache-operator service reachable?");
      }
      return UnavailableError(where + ": " + stage + ": " + failure.message() +
                              "; is the kernelcache-operator service reachable?");
    }
    if (res.result_int() != 200) {
      return StatusForHttp(res.result_int(), res.body()).WithContext(where);
    }
    auto answer = ParseResolveAnswer(res.body());
    if (!answer.ok()) return answer.status().WithContext(where);
    return answer;
  }

 private:
  std::string base_;
  std::chrono::milliseconds timeout_;
};

class FileResolver : public Resolver {
 public:
  explicit FileResolver(std::string path) : path_(std::move(path)) {}
  StatusOr<ResolveAnswer> Resolve(const std::string&, const std::string&,
                                  const std::string&) override {
    std::ifstream in(path_);
    if (!in) return NotFoundError("resolve answer file " + path_ + " cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    auto a = ParseResolveAnswer(ss.str());
    if (!a.ok()) return a.status().WithContext("resolve answer file " + path_);
    return a;
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<Resolver> NewHttpResolver(std::string base_url, std::chrono::milliseconds timeout) {
  return std::make_unique<HttpResolver>(std::move(base_url), timeout);
}
std::unique_ptr<Resolver> NewFileResolver(std::string path) {
  return std::make_unique<FileResolver>(std::move(path));
}

}  // namespace kc::initwarm
