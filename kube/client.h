// Client: typed verbs against the Kubernetes API, over a Transport.
//
// Objects travel as nlohmann::json at this layer (so any resource, built-in
// or custom, works the same); typed structs are made from them at the edge
// (api/*.h for the built-in kinds the operator needs, core/ for
// KernelCache). API errors come back as Status with the code mapped from the
// server's metav1.Status (see kube/api_error.h): NotFound, AlreadyExists,
// Conflict, Gone, InvalidArgument (Invalid, the field causes in the message),
// PermissionDenied (Forbidden), Unauthenticated, Unavailable. Nothing throws.
//
// Thread-safe: one Client is shared by every informer and worker.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/resource.h"
#include "kube/transform.h"

namespace kc::kube {

using Json = nlohmann::json;

struct ListOptions {
  std::string label_selector;    // "app=llama,tier!=db"
  std::string field_selector;    // "spec.nodeName=gpu-07"
  int64_t limit = 0;             // page size; 0 = server default (no paging)
  std::string continue_token;    // from the previous page
  std::string resource_version;  // "" = most recent (quorum read)
  // Applied to each item while the page is parsed, so a page of a large
  // list never holds whole objects (RestClient; ListResult::items_transformed
  // says whether a client did). Must be a projection: applying it twice
  // gives what applying it once does.
  ObjectTransform item_transform;
};

struct ListResult {
  std::vector<Json> items;         // each with apiVersion and kind filled in
  std::string resource_version;    // of the list, for a following watch
  std::string continue_token;      // non-empty when more pages remain
  bool items_transformed = false;  // ListOptions::item_transform was applied
};

enum class PropagationPolicy { kDefault, kForeground, kBackground, kOrphan };

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  PropagationPolicy propagation = PropagationPolicy::kDefault;
  std::optional<int64_t> grace_period_seconds;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kJsonPatch,       // application/json-patch+json (RFC 6902)
  kApply,           // application/apply-patch+yaml: server-side apply (body is JSON)
};

struct PatchOptions {
  std::string field_manager = "kernelcache";  // required for kApply
  bool force = false;                         // kApply: take ownership of conflicting fields
  std::string subresource;                    // "" or "status"
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // resume point; "" = start now
  int timeout_seconds = 300;     // server-side timeoutSeconds
  bool allow_bookmarks = true;
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  Json object;  // the object; for kError the metav1.Status
};

class Client {
 public:
  virtual ~Client() = default;

  virtual StatusOr<Json> Get(const Resource& r, const std::string& ns, const std::string& name) = 0;
  // One page. See ListAll() for every page.
  virtual StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                                    const ListOptions& options) = 0;
  virtual StatusOr<Json> Create(const Resource& r, const std::string& ns, const Json& object) = 0;
  // PUT; `object` carries metadata.resourceVersion for optimistic concurrency.
  virtual StatusOr<Json> Update(const Resource& r, const std::string& ns, const Json& object) = 0;
  // PUT to the status subresource.
  virtual StatusOr<Json> UpdateStatus(const Resource& r, const std::string& ns,
                                      const Json& object) = 0;
  virtual StatusOr<Json> Patch(const Resource& r, const std::string& ns, const std::string& name,
                               PatchType type, const Json& patch,
                               const PatchOptions& options = {}) = 0;
  virtual Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                        const DeleteOptions& options = {}) = 0;

  // Opens one watch and calls `handler` for every event, in order, until the
  // server closes the stream (OK), `handler` returns false (OK), `stop` is
  // requested (Cancelled), the resourceVersion is too old (Gone: relist), or
  // the connection fails (Unavailable/DeadlineExceeded: resume from the last
  // resourceVersion seen). ERROR events carrying 410 come back as Gone.
  virtual Status Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
                       std::stop_token stop,
                       const std::function<bool(const WatchEvent&)>& handler) = 0;
};

// Every page of a list, concatenated (`options.limit` sets the page size).
// With a `transform`, each item is transformed as its page arrives, so the
// whole untransformed list is never held at once.
StatusOr<ListResult> ListAll(Client& client, const Resource& r, const std::string& ns,
                             ListOptions options, const ObjectTransform& transform = {});

// Every page of a list, item by item: `each` gets every item (transformed,
// while its page is parsed when the client can) as its page arrives, and a
// page is dropped before the next is fetched, so a large list is never held
// at once. Returns the list's resourceVersion (the first page's snapshot).
StatusOr<std::string> ListEach(Client& client, const Resource& r, const std::string& ns,
                               ListOptions options, const ObjectTransform& transform,
                               const std::function<void(Json&& item)>& each);

}  // namespace kc::kube
