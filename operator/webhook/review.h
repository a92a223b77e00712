// operator/webhook/review.h: the admission handlers' contract, HTTP body in,
// HTTP answer out. Pure (no I/O); the TLS server and the operator's main call
// these.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api_types.h"
#include "core/security_context.h"

namespace kc::webhook {

// What the operator knows that a mutation needs.
struct InjectSettings {
  std::string initwarm_image;      // image of the kernelcache-wait init container
  std::string resolve_url;         // base URL of the operator's resolve endpoint as pods reach it
  std::string operator_namespace;  // pods here are never mutated
  std::string injector_version;    // recorded in an annotation
  std::string image_pull_policy = "IfNotPresent";  // of the kernelcache-wait init container
  // Base URL of the operator's miss channel (POST /v1/misses) as pods reach
  // it; "" = resolve_url. Reports go only where a resolve URL is given.
  std::string misses_url = "";
  int64_t miss_watcher_uid = core::kDefaultMissWatcherUid;  // the miss watcher's own uid
};

// Lists the KernelCaches of one namespace (the operator's informer cache).
using KernelCacheLister = std::function<std::vector<core::KernelCache>(const std::string& ns)>;
// What the API server says about a spec.storage.storageClassName: whether
// the StorageClass exists, and whether a PersistentVolume names it (a static
// volume of that class binds a claim with no StorageClass object). kUnknown:
// not asked, or the API server did not answer.
enum class Known { kYes, kNo, kUnknown };
struct StorageClassFacts {
  Known class_exists = Known::kUnknown;
  Known volume_names_it = Known::kUnknown;
};
// Looks a storageClassName up; may be empty (then no warning is given).
using StorageClassLookup = std::function<StorageClassFacts(const std::string& name)>;

// A Warning Event the caller records on a KernelCache.
struct WarningEvent {
  std::string kc_namespace;
  std::string kc_name;
  std::string reason;
  std::string message;
};

struct ReviewAnswer {
  // 200 with an admission.k8s.io/v1 AdmissionReview response body; 4xx with
  // {"error":"..."} for a malformed request (bad JSON, wrong kind/version,
  // missing fields).
  int http_status = 200;
  std::string body;
  std::vector<WarningEvent> events;
};

// POST /mutate-pods
ReviewAnswer ReviewPodMutation(std::string_view body, const KernelCacheLister& list,
                               const InjectSettings& settings);
// POST /validate-kernelcaches
ReviewAnswer ReviewKernelCacheValidation(std::string_view body, const KernelCacheLister& list,
                                         const StorageClassLookup& storage_class);

}  // namespace kc::webhook
