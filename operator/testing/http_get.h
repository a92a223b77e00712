// HttpGet, HttpPost: a blocking plain-HTTP GET or POST for tests and probes of the operator's
// endpoints (/healthz, /readyz, /metrics, /v1/resolve). Test-only: linked
// from kc_operator_testing, never into kernelcache-operator.
#pragma once

#include <string>

#include "base/status.h"

namespace kc::op {

struct HttpGetResult {
  int status = 0;
  std::string body;
  std::string content_type;
};

// One GET of http://host:port<target> (10 s connect and read limits);
// Unavailable naming the URL when it cannot be done.
StatusOr<HttpGetResult> HttpGet(const std::string& host, int port, const std::string& target);

// One POST of `body` (application/json), with "Authorization:
// <authorization>" when it is not empty; same limits.
StatusOr<HttpGetResult> HttpPost(const std::string& host, int port, const std::string& target,
                                 const std::string& body, const std::string& authorization = "");

}  // namespace kc::op
