// Controller: informers on KernelCache, Node, Job, Pod and PVC; event
// handlers that map every object back to the KernelCache key(s) it affects;
// a rate-limited work queue; N workers running the Reconciler.
//
// Mapping (level-triggered: a key means "look at this KernelCache again"):
//   KernelCache          -> itself
//   Node                 -> every KernelCache whose spec.nodeSelector matches
//                           the node's old or new labels (updates only when
//                           labels, cordon, Ready, or GPU allocatable changed)
//   Job, Pod             -> label kernelcache.io/name in the object's namespace
//   gated model Pod      -> label kernelcache.io/consumer (a second Pod informer
//                           with that label selector), only when the reports of
//                           its `kernelcache-wait` init container change
//   PersistentVolumeClaim -> its KernelCache ownerReference, and every
//                           KernelCache whose spec.storage.existingClaim names it
//
// The informers cache only what the operator reads of each object
// (operator/controller/cache_transforms.h): no managedFields, no Job or Pod specs.
//
// Lifecycle: StartInformers() (every replica: the caches also serve
// /v1/resolve and /readyz), then RunWorkers(stop) while leading; it waits
// for the caches to sync, enqueues every KernelCache, runs the workers until
// `stop`, then drains the queue (in-flight reconciles finish). Stop()
// stops the informers and joins their threads.
// Worker outcome: error -> AddRateLimited (backoff per key); status
// deferred (urgent keys were waiting, Reconciler step 4) -> Forget + Add;
// requeue_after -> Forget + AddAfter; success -> Forget.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"
#include "kube/informer.h"
#include "kube/workqueue.h"
#include "operator/controller/caches.h"
#include "operator/controller/miss_ledger.h"
#include "operator/controller/reconciler.h"
#include "operator/controller/resolve.h"
#include "operator/controller/selector_index.h"
#include "operator/decide/types.h"
#include "operator/serving/logging.h"
#include "operator/serving/metrics.h"

namespace kc::op {

// Objects per list page of the operator's informers (the API server's
// default chunk, and client-go's, is 500). A page's response is held whole
// while its items are parsed, two or three copies of its bytes (the HTTP
// buffer, the string, the parser's item); at a restart every informer lists
// at once, and pages of 500 warmup Jobs, pods and KernelCaches, whole objects
// with their managedFields, were most of the relist's peak.
inline constexpr int64_t kListPageSize = 100;

struct ControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  int workers = 2;
  Settings settings;
  std::chrono::seconds resync_period{600};
  std::string queue_name = "kernelcache";
  std::string identity = "kernelcache-operator";  // Event reportingInstance
  // Events are written through this client (its own rate limit, as
  // client-go's event broadcaster has its own clientset), so a burst of
  // Events never spends the reconciles' requests; null: the controller's.
  kube::Client* events_client = nullptr;
};

class Controller {
 public:
  Controller(kube::Client& client, ControllerOptions options, OperatorMetrics* metrics,
             Logger logger);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  void StartInformers();
  bool HasSynced() const;
  bool WaitForSync(const std::stop_token& stop, std::chrono::milliseconds timeout) const;
  void RunWorkers(const std::stop_token& stop);
  void Stop();

  // The /v1/resolve answer from the caches.
  ResolveResponse Resolve(const ResolveQuery& query) const;
  // The cached KernelCaches of one namespace (the admission webhooks' lister),
  // and one as the API returned it (for Events).
  std::vector<core::KernelCache> KernelCachesIn(const std::string& ns) const;
  std::optional<kube::Json> KernelCacheObject(const std::string& ns, const std::string& name) const;
  // The miss channel (operator/controller/miss_intake.h): the ledger the
  // reconciler reads runtimeMisses from, a gated pod from the cache by
  // namespace and name, and a reconcile of one KernelCache.
  MissLedger& misses() { return misses_; }
  std::optional<kube::Json> GatedPod(const std::string& ns, const std::string& name) const;
  void EnqueueKernelCache(const std::string& ns, const std::string& name, const char* source) {
    Enqueue(ns + "/" + name, source);
  }
  // The Event sink the reconciler uses.
  EventSink* events() const { return events_.get(); }

  kube::WorkQueue& queue() { return *queue_; }

 private:
  kube::Informer& AddInformer(const kube::Resource& r, const std::string& ns,
                              const std::string& label_selector,
                              std::vector<const kube::Store*>* stores);
  // The informers of one namespace ("" = all) and their handlers.
  void WatchKernelCaches(const std::string& ns);
  // Jobs or warmup Pods labelled kernelcache.io/name: an update enqueues
  // only when `matters` (operator/decide/views.h).
  using ChangeMatters = bool (*)(const kube::Json& before, const kube::Json& after);
  void WatchOwned(const kube::Resource& r, const std::string& ns,
                  std::vector<const kube::Store*>* stores, const char* source,
                  ChangeMatters matters);
  void WatchGatedPods(const std::string& ns);
  void WatchPvcs(const std::string& ns);
  // Deployments and StatefulSets: a change of one a server warmup names
  // queues the KernelCaches naming it.
  void WatchWorkloads(const std::string& ns);
  void EnqueueForWorkload(const std::string& kind, const Json& workload);
  void WatchNodes();
  // `urgent`: ahead of keys queued without (kube::WorkQueue::AddUrgent).
  void Enqueue(const std::string& key, const char* source, bool urgent = false);
  // Every KernelCache whose spec.nodeSelector matches `labels`.
  void EnqueueForNode(const LabelSet& labels);
  // An updated node: the KernelCaches NodeChangeConcerns (eligibility.h).
  void EnqueueForNodeChange(const NodeView& before, const NodeView& after);
  // Queues (source "node") the KernelCaches whose nodeSelector `concerns`.
  void EnqueueSelecting(
      const std::function<bool(const std::map<std::string, std::string>&)>& concerns);
  // The KernelCaches' nodeSelectors (selectors_), kept by their informer's
  // handlers.
  void RememberSelector(const kube::Json& kc);
  void ForgetSelector(const kube::Json& kc);
  void EnqueueByLabel(const kube::Json& obj, const char* source);
  void EnqueueConsumer(const kube::Json& pod);  // label kernelcache.io/consumer
  void EnqueueForPvc(const kube::Json& pvc);
  void Worker();

  kube::Client& client_;
  ControllerOptions options_;
  OperatorMetrics* metrics_;
  Logger logger_;
  MissLedger misses_;
  Caches caches_;
  NodeIndex node_index_;
  SelectorIndex selectors_;  // KernelCache key -> its spec.nodeSelector
  std::vector<std::unique_ptr<kube::Informer>> informers_;
  std::vector<std::jthread> informer_threads_;
  std::unique_ptr<kube::WorkQueue> queue_;
  std::unique_ptr<ClientEventSink> events_;
  std::unique_ptr<Reconciler> reconciler_;
};

}  // namespace kc::op
