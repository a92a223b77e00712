// The admission.k8s.io/v1 AdmissionReview codec: the request the API
// server POSTs to a webhook, and the response it expects back.
//
// DecodeAdmissionReview is total: any input gives a request or an
// InvalidArgument whose message says what is wrong (not JSON, nested
// deeper than kMaxJsonDepth, apiVersion not admission.k8s.io/v1, kind not
// AdmissionReview, request/uid/object missing or of the wrong type).
// `object` is required for CREATE and UPDATE, absent for DELETE (which
// carries oldObject). Nothing throws. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::webhook {

using Json = nlohmann::json;

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";
inline constexpr std::string_view kAdmissionReviewKind = "AdmissionReview";
// Kubernetes objects nest a few dozen levels at most; deeper input is
// refused before it reaches recursive code (diff, dump, compare).
inline constexpr int kMaxJsonDepth = 100;

// A group/version/kind or group/version/resource.
struct GroupVersionName {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string name;     // kind "Pod" or resource "pods"
};

struct AdmissionRequest {
  std::string uid;
  GroupVersionName kind;      // request.kind
  GroupVersionName resource;  // request.resource
  std::string sub_resource;   // request.subResource
  std::string name;           // request.name ("" for a pod with generateName)
  std::string ns;             // request.namespace
  std::string operation;      // CREATE | UPDATE | DELETE | CONNECT
  Json object;                // request.object; null when absent (DELETE)
  Json old_object;            // request.oldObject; null when absent
  bool dry_run = false;       // request.dryRun
};

StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body);

struct AdmissionResponse {
  std::string uid;
  bool allowed = true;
  Json patch = Json::array();  // RFC 6902 operations; sent only when non-empty
  std::vector<std::string> warnings;
  // For a denial: status.message and status.code (403 unless set).
  std::string message;
  int code = 0;
};

// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":
//  {"uid":..,"allowed":..,"patchType":"JSONPatch","patch":"<base64>",
//   "warnings":[..],"status":{"code":403,"message":".."}}}
std::string EncodeAdmissionReview(const AdmissionResponse& response);

// {"error":"<message>"}: the body of a 4xx answer to a malformed request.
std::string ErrorBody(std::string_view message);

// True when `text` nests arrays/objects deeper than `limit` (strings are
// skipped, so brackets inside them do not count). Linear, no recursion.
bool JsonDeeperThan(std::string_view text, int limit);

}  // namespace kc::webhook
