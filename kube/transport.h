// Transport: one HTTP round trip, or one streamed response, to the API server.
//
// The only seam between KernelCache and its HTTP library. The production
// implementation (kube/http_transport.*) wraps cpprestsdk and is the only
// file that includes it; tests substitute an in-memory fake. A Transport
// knows nothing of Kubernetes semantics: HTTP error statuses come back as
// responses, and Status is non-OK only when no response was had (connect
// failure, TLS failure, timeout, cancellation).
#pragma once

#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::kube {

struct HttpRequest {
  std::string method;        // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;          // "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db"
  std::string body;          // empty for none
  std::string content_type;  // e.g. "application/merge-patch+json"; empty for none
  std::map<std::string, std::string> headers;  // extra headers
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // header names lower-cased
};

class Transport {
 public:
  virtual ~Transport() = default;

  // One request, whole response.
  virtual StatusOr<HttpResponse> Do(const HttpRequest& request) = 0;

  // Streams a response body line by line as it arrives (a watch). Calls
  // `on_line` for every complete line, in order; `on_line` returns false to
  // stop reading. Returns when the server ends the stream, `on_line` stops,
  // `stop` is requested (CancelledError), or the connection fails
  // (UnavailableError / DeadlineExceededError for an idle timeout). A
  // non-2xx status is returned in `*response` (status and whole body) with
  // OK Status and no lines delivered.
  virtual Status Stream(const HttpRequest& request, std::stop_token stop,
                        const std::function<bool(std::string_view line)>& on_line,
                        HttpResponse* response) = 0;
};

}  // namespace kc::kube
