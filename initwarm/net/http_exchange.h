// One HTTP/1.1 exchange over plain HTTP: with the operator's in-cluster
// Service (the resolve client, the miss sender) or with a server warmup's
// own server on the loopback (`initwarm drive`). Boost.Beast
// over Boost.Asio; one timer bounds the whole exchange, name resolution
// included. Only transport failures are errors here: any HTTP status comes
// back as a reply, and StatusForHttp maps a non-200 reply to a Status.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/resolve_answer.h"

namespace kc::initwarm {

// What a transport failure's message ends with by default: what to check.
inline constexpr char kOperatorUnreachable[] = "; is the kernelcache-operator service reachable?";

struct HttpCall {
  std::string method;         // "GET", "POST", "PUT", "PATCH", "DELETE"; others are GET
  std::string target;         // path and query, e.g. "/v1/resolve?node=n"
  std::string authorization;  // the Authorization header; "" sends none
  std::string body;           // sent when not empty, and always with POST
  // Further request headers, set after the client's own (Host, User-Agent,
  // Accept, Authorization, Content-Type), so one of the same name replaces
  // it. Content-Length is always the body's.
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string content_type{};                           // of a body sent; "" is application/json
  std::string unreachable_hint = kOperatorUnreachable;  // appended to transport failures
};

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

// "GET http://host:port/target": how errors name the exchange.
std::string HttpWhere(const core::ResolveUrl& url, const HttpCall& call);

// DeadlineExceeded when no whole answer came within `timeout`; Unavailable
// (naming the stage: resolve host, connect, send request, read response)
// for any other transport failure.
StatusOr<HttpReply> HttpExchange(const core::ResolveUrl& url, const HttpCall& call,
                                 std::chrono::milliseconds timeout);

// Whether a TCP connection to url.host:url.port opens within `timeout`
// (then closed at once, nothing sent): OK, else DeadlineExceeded or
// Unavailable naming the stage.
Status TcpConnect(const core::ResolveUrl& url, std::chrono::milliseconds timeout);

// A non-200 reply as a Status carrying the body's {"error"} (or its first
// 200 bytes): 404 NotFound, 400 InvalidArgument, 401 Unauthenticated,
// 403 PermissionDenied, 5xx Unavailable, anything else Unknown. `what`
// names the endpoint ("resolve endpoint").
Status StatusForHttp(const std::string& what, const HttpReply& reply);

}  // namespace kc::initwarm
