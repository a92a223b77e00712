// FakeClient: an in-memory Client for unit tests of the controller machinery.
//
// Behaves like a single API server closely enough for informers, leader
// election and event recording:
// - Objects live in a map keyed by (group/resource, namespace, name). Every
//   write takes the next value of one resourceVersion counter; Create fills
//   uid, creationTimestamp, generation, apiVersion and kind; Update with a
//   metadata.resourceVersion that is not the stored one fails with Conflict
//   (as does a merge patch carrying a stale resourceVersion, or a Delete with
//   failed preconditions). Merge and strategic-merge patches are RFC 7386,
//   JSON patch is RFC 6902, apply is a merge that creates when missing.
// - Status subresource, as the API server: for a resource that has one
//   (every resource but the built-ins without status: ConfigMaps, Secrets,
//   Events, Leases, RBAC, webhook configurations...; SetStatusSubresource
//   changes that), Update and Patch of the main resource ignore changes to
//   `status`, and UpdateStatus and Patch with subresource "status" change
//   nothing but `status`; on a resource without one they are NotFound.
//   Create keeps the status it is given (so tests can seed state; the real
//   server drops it for most types).
// - metadata.generation starts at 1 and goes up when anything but metadata
//   (and status, with a status subresource) changes, and when
//   deletionTimestamp is set.
// - Finalizers: Delete of an object with finalizers sets
//   metadata.deletionTimestamp (watchers see MODIFIED) and the object stays;
//   no finalizer can be added to it any more, and the update or patch that
//   removes the last one deletes it (DELETED). Propagation policies add no
//   finalizers and pods get no graceful deletion.
// - List honours label selectors (=, ==, !=, exists, !exists, in, notin),
//   metadata.name / metadata.namespace field selectors, and paging
//   (limit/continue); a continue token from before Compact() is Gone.
// - Watch replays the history after options.resource_version (Gone when it
//   is older than the last Compact()); "" or "0" first sends synthetic ADDED
//   events for the objects that exist. Label selector changes turn into
//   ADDED/DELETED as on a real server. Bookmarks are sent on SendBookmark().
// - Faults: DisconnectWatches(status) ends every open watch with `status`
//   after delivering the events already written (Unavailable = dropped connection, Gone = 410
//   mid-stream, OK = server timeout); FailNextWatches(n, status) makes the next n Watch calls fail
//   at once; SetReactor() can fail any verb.
// - Every call is recorded as an Action (verb, resource, namespace, name,
//   body) for assertions.
//
// Thread-safe. Handlers run on the watching thread without the fake's lock
// held, so they may call back into the fake.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "kube/client.h"
#include "kube/clock.h"

namespace kc::kube {

struct FakeAction {
  std::string verb;      // get list create update updatestatus patch delete watch
  std::string resource;  // "configmaps", "leases.coordination.k8s.io"
  std::string ns;
  std::string name;
  Json body;  // the object or patch sent, if any
};

// Does `labels` (an object of string values, or null) match `selector`?
StatusOr<bool> MatchesLabelSelector(const std::string& selector, const Json& labels);

class FakeClient final : public Client {
 public:
  using Reactor = std::function<Status(const FakeAction&)>;

  explicit FakeClient(Clock* clock = nullptr);

  StatusOr<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override;
  StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                            const ListOptions& options) override;
  StatusOr<Json> Create(const Resource& r, const std::string& ns, const Json& object) override;
  StatusOr<Json> Update(const Resource& r, const std::string& ns, const Json& object) override;
  StatusOr<Json> UpdateStatus(const Resource& r, const std::string& ns,
                              const Json& object) override;
  StatusOr<Json> Patch(const Resource& r, const std::string& ns, const std::string& name,
                       PatchType type, const Json& patch,
                       const PatchOptions& options = {}) override;
  Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                const DeleteOptions& options = {}) override;
  Status Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
               std::stop_token stop,
               const std::function<bool(const WatchEvent&)>& handler) override;

  // --- test controls ---
  // A non-OK status from the reactor fails the call (after it is recorded).
  // It runs with the fake's lock held: it must not call back into the fake.
  void SetReactor(Reactor reactor);
  // Whether `r` has a status subresource (default: see above).
  void SetStatusSubresource(const Resource& r, bool enabled);
  void DisconnectWatches(Status status = UnavailableError("fake: watch connection dropped"));
  void FailNextWatches(int n, Status status);
  // Forget history up to now: resuming from an older resourceVersion is Gone.
  void Compact();
  void SendBookmark();

  int64_t resource_version() const;
  std::vector<FakeAction> Actions() const;
  void ClearActions();
  int OpenWatches() const;
  int WatchCalls() const;
  // resource_version asked for by each Watch call, in order.
  std::vector<std::string> WatchResourceVersions() const;
  // Wait (real time, bounded) for conditions on watches; false on timeout.
  bool WaitForOpenWatches(int n,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  bool WaitForWatchCalls(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource id, ns, name
  struct HistoryEntry {
    int64_t rv;
    WatchEvent::Type type;
    std::string resource_id;
    std::string ns;
    Json object;
    Json previous;  // for kModified
  };

  static std::string ResourceId(const Resource& r);
  Status RecordLocked(const FakeAction& action);
  void AppendLocked(WatchEvent::Type type, const std::string& resource_id, const std::string& ns,
                    const Json& object, const Json& previous);
  static Status NoStatusSubresource(const Resource& r);
  bool HasStatusSubresourceLocked(const Resource& r) const;
  // An update of `previous` to `object` through the main resource or (with
  // to_status) the status subresource: keeps what that endpoint may not
  // change, then PutLocked.
  StatusOr<Json> WriteLocked(const Resource& r, const std::string& ns, Json object,
                             const Json& previous, bool to_status);
  // Stores `object` (or deletes it, when deleting without finalizers) and
  // records the event.
  StatusOr<Json> PutLocked(const Resource& r, const std::string& ns, Json object,
                           const Json& previous);

  Clock& clock_;
  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  std::map<Key, Json> objects_;
  std::vector<HistoryEntry> history_;
  int64_t rv_ = 100;
  int64_t compacted_rv_ = 0;
  int64_t next_uid_ = 1;
  Reactor reactor_;
  std::map<std::string, bool> status_subresource_;  // resource id -> overrides
  std::vector<FakeAction> actions_;
  uint64_t disconnect_epoch_ = 0;
  Status disconnect_status_;
  int fail_next_watches_ = 0;
  Status fail_watch_status_;
  uint64_t bookmark_epoch_ = 0;
  int open_watches_ = 0;
  int watch_calls_ = 0;
  std::vector<std::string> watch_rvs_;
};

}  // namespace kc::kube
