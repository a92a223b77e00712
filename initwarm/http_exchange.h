// One HTTP/1.1 exchange with the operator (plain HTTP to its in-cluster
// Service), shared by the resolve client and the miss sender. Boost.Beast
// over Boost.Asio; one timer bounds the whole exchange, name resolution
// included. Only transport failures are errors here: any HTTP status comes
// back as a reply, and StatusForHttp maps a non-200 reply to a Status.
#pragma once

#include <chrono>
#include <string>

#include "base/status.h"
#include "core/resolve_answer.h"

namespace kc::initwarm {

struct HttpCall {
  std::string method;         // "GET" or "POST"
  std::string target;         // path and query, e.g. "/v1/resolve?node=n"
  std::string authorization;  // the Authorization header; "" sends none
  std::string body;           // POST: sent as application/json
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

// A non-200 reply as a Status carrying the body's {"error"} (or its first
// 200 bytes): 404 NotFound, 400 InvalidArgument, 401 Unauthenticated,
// 403 PermissionDenied, 5xx Unavailable, anything else Unknown. `what`
// names the endpoint ("resolve endpoint").
Status StatusForHttp(const std::string& what, const HttpReply& reply);

}  // namespace kc::initwarm
