#include "operator/testing/http_get.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

namespace kc::op {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

StatusOr<HttpGetResult> Request(http::verb verb, const std::string& host, int port,
                                const std::string& target, const std::string& body,
                                const std::string& authorization) {
  try {
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(10));
    stream.connect(resolver.resolve(host, std::to_string(port)));
    timeval tv{10, 0};  // the sync read below has no other deadline
    setsockopt(stream.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, host);
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    if (verb == http::verb::post) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
    }
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return HttpGetResult{static_cast<int>(res.result_int()), res.body(),
                         std::string(res[http::field::content_type])};
  } catch (const std::exception& e) {
    return UnavailableError(std::string(http::to_string(verb)) + " http://" + host + ":" +
                            std::to_string(port) + target + ": " + e.what());
  }
}

}  // namespace

StatusOr<HttpGetResult> HttpGet(const std::string& host, int port, const std::string& target) {
  return Request(http::verb::get, host, port, target, "", "");
}

StatusOr<HttpGetResult> HttpPost(const std::string& host, int port, const std::string& target,
                                 const std::string& body, const std::string& authorization) {
  return Request(http::verb::post, host, port, target, body, authorization);
}

}  // namespace kc::op
