// API errors: a non-2xx response from the API server becomes a typed Status.
//
// The server's metav1.Status body decides the code (its `reason` first, the
// HTTP code second):
//   NotFound (404)                      -> kNotFound
//   AlreadyExists (409)                 -> kAlreadyExists
//   Conflict (409)                      -> kConflict (stale resourceVersion)
//   Gone / Expired (410)                -> kGone (relist)
//   Invalid (422)                       -> kInvalidArgument, with every
//                                          details.causes[] as "field: message"
//   BadRequest (400), 405, 406, 413, 415 -> kInvalidArgument
//   Forbidden (403)                     -> kPermissionDenied
//   Unauthorized (401)                  -> kUnauthenticated
//   TooManyRequests (429), 5xx,
//   ServerTimeout, Timeout (504)        -> kUnavailable (retry)
//   anything else                       -> kUnknown
// The message is "<context>: <server message>" so a log line says which call
// failed and why. A body that is not a metav1.Status (a proxy's HTML page)
// is quoted, shortened.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "base/status.h"
#include "kube/transport.h"

namespace kc::kube {

// OK for a 2xx response; otherwise the mapped error. `context` describes
// the call, e.g. `get configmaps "x" in namespace "ns"`.
Status StatusFromResponse(const HttpResponse& response, std::string_view context);

// Maps a decoded metav1.Status (a response body or the object of a watch
// ERROR event). `http_code` is used when the status carries no `code`.
Status StatusFromApiStatus(const nlohmann::json& api_status, int http_code,
                           std::string_view context);

}  // namespace kc::kube
