#include "operator/controller/controller.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>

#include "api/meta.h"
#include "core/api_types.h"
#include "operator/controller/cache_transforms.h"
#include "operator/controller/event_keys.h"
#include "operator/controller/gate_reports.h"
#include "operator/controller/workloads.h"
#include "operator/decide/eligibility.h"
#include "operator/decide/views.h"

namespace kc::op {
namespace {

using Json = kube::Json;

// Runs an informer handler's body so that nothing it throws reaches the
// informer's thread (which would end the process): a failure is logged and
// the event dropped; the periodic resync brings the key back.
template <typename F>
void Safely(const Logger& log, const char* what, F&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    try {
      log.Error("event handler failed; event dropped", {{"handler", what}, {"error", e.what()}});
    } catch (...) {  // NOLINT(bugprone-empty-catch): logging is best effort
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch)
  }
}

// The gate container's reports and the runs that wrote them, compared to
// decide whether a pod update matters (a new run with the same report is a
// new gate run to count).
std::string GateMessages(const Json& pod) {
  std::string out;
  for (const auto& r : GateReportsFromPod(pod)) {
    out += r.container_id + " " + core::GateReportToJson(r.report) + "\n";
  }
  return out;
}

}  // namespace

Controller::Controller(kube::Client& client, ControllerOptions options, OperatorMetrics* metrics,
                       Logger logger)
    : client_(client), options_(std::move(options)), metrics_(metrics), logger_(std::move(logger)) {
  kube::WorkQueue::Options qo;
  qo.name = options_.queue_name;
  queue_ = std::make_unique<kube::WorkQueue>(std::move(qo));
  std::vector<std::string> namespaces = options_.namespaces;
  if (namespaces.empty()) namespaces.emplace_back();  // all
  for (const std::string& ns : namespaces) {
    WatchKernelCaches(ns);
    WatchOwned(kube::resources::kJobs, ns, &caches_.jobs, "job", JobChangeMatters);
    WatchOwned(kube::resources::kPods, ns, &caches_.pods, "pod", PodChangeMatters);
    WatchGatedPods(ns);
    WatchPvcs(ns);
    WatchWorkloads(ns);
  }
  WatchNodes();
  events_ = std::make_unique<ClientEventSink>(
      options_.events_client != nullptr ? *options_.events_client : client_, logger_,
      options_.identity);
  caches_.misses = &misses_;
  reconciler_ = std::make_unique<Reconciler>(client_, caches_, options_.settings, events_.get(),
                                             metrics_, logger_);
  reconciler_->DeferStatusWhile([q = queue_.get()] { return q->UrgentLen() > 0; });
}

void Controller::WatchKernelCaches(const std::string& ns) {
  auto& kcs = AddInformer(resources::KernelCaches(), ns, "", &caches_.kernelcaches);
  kcs.AddEventHandler({
      [this](const Json& o) {
        RememberSelector(o);
        Enqueue(kube::ObjectKey(o), "kernelcache");
      },
      [this](const Json&, const Json& o) {
        RememberSelector(o);
        Enqueue(kube::ObjectKey(o), "kernelcache");
      },
      [this](const Json& o, bool) {
        ForgetSelector(o);
        Enqueue(kube::ObjectKey(o), "kernelcache");
      },
  });
}

void Controller::WatchOwned(const kube::Resource& r, const std::string& ns,
                            std::vector<const kube::Store*>* stores, const char* source,
                            ChangeMatters matters) {
  const std::string owned = kLabelName;  // "exists" selector
  auto& informer = AddInformer(r, ns, owned, stores);
  informer.AddEventHandler({
      [this, source](const Json& o) { EnqueueByLabel(o, source); },
      [this, source, matters](const Json& before, const Json& after) {
        Safely(logger_, source, [&] {
          if (matters(before, after)) EnqueueByLabel(after, source);
        });
      },
      [this, source](const Json& o, bool) { EnqueueByLabel(o, source); },
  });
}

// Gated model pods: their gate's termination message (core/gate_report.h)
// says when it quarantined a cache, and feeds the gate metrics. Only a
// change of the gate container's reports enqueues (model pods change often
// otherwise).
void Controller::WatchGatedPods(const std::string& ns) {
  auto& gated = AddInformer(kube::resources::kPods, ns, core::kConsumerLabel, &caches_.gated_pods);
  gated.AddEventHandler({
      [this](const Json& o) {
        if (!GateReportsFromPod(o).empty()) EnqueueConsumer(o);
      },
      [this](const Json& old_pod, const Json& new_pod) {
        if (GateMessages(old_pod) != GateMessages(new_pod)) EnqueueConsumer(new_pod);
      },
      [](const Json&, bool) {},
  });
}

void Controller::WatchPvcs(const std::string& ns) {
  auto& pvcs = AddInformer(kube::resources::kPersistentVolumeClaims, ns, "", &caches_.pvcs);
  pvcs.AddEventHandler({
      [this](const Json& o) { EnqueueForPvc(o); },
      [this](const Json&, const Json& o) { EnqueueForPvc(o); },
      [this](const Json& o, bool) { EnqueueForPvc(o); },
  });
}

void Controller::WatchWorkloads(const std::string& ns) {
  for (const auto* r : {&kube::resources::kDeployments, &kube::resources::kStatefulSets}) {
    auto* stores =
        r == &kube::resources::kDeployments ? &caches_.deployments : &caches_.statefulsets;
    auto& inf = AddInformer(*r, ns, "", stores);
    const std::string kind = r->kind;
    inf.AddEventHandler({
        [this, kind](const Json& o) { EnqueueForWorkload(kind, o); },
        [this, kind](const Json& before, const Json& after) {
          // Status-only updates (a rollout's progress) change nothing read.
          if (api::Object(before, "spec") != api::Object(after, "spec")) {
            EnqueueForWorkload(kind, after);
          }
        },
        [this, kind](const Json& o, bool) { EnqueueForWorkload(kind, o); },
    });
  }
}

void Controller::EnqueueForWorkload(const std::string& kind, const Json& workload) {
  Safely(logger_, "workload", [&] {
    for (const std::string& key :
         KeysNamingWorkload(kind, workload, Caches::All(caches_.kernelcaches))) {
      Enqueue(key, "workload");
    }
  });
}

// Nodes: the index first, then the KernelCaches the node concerns, so the
// reconcile that follows reads the new state. The index is the one copy of
// each node: the informer's store keeps only its name and resourceVersion
// (CacheKeepFor), so an update's "before" and a delete's labels come from
// the index.
void Controller::WatchNodes() {
  caches_.nodes = &node_index_;
  std::vector<const kube::Store*> node_stores;  // read through node_index_ only
  auto& nodes = AddInformer(kube::resources::kNodes, "", "", &node_stores);
  nodes.AddEventHandler({
      [this](const Json& o) {
        Safely(logger_, "node", [&] {
          NodeView v = NodeViewFromJson(o);
          node_index_.Upsert(v);
          EnqueueForNode(v.labels);
        });
      },
      [this](const Json&, const Json& new_node) {
        Safely(logger_, "node", [&] {
          NodeView after = NodeViewFromJson(new_node);
          std::optional<NodeView> before = node_index_.Get(after.name);
          if (before && *before == after)
            return;  // a heartbeat, an image list: nothing Decide reads
          node_index_.Upsert(after);
          if (before) {
            EnqueueForNodeChange(*before, after);
          } else {
            EnqueueForNode(after.labels);
          }
        });
      },
      [this](const Json& o, bool) {
        Safely(logger_, "node", [&] {
          std::optional<NodeView> last = node_index_.Remove(api::MetaString(o, "name"));
          EnqueueForNode(last ? last->labels : LabelSet(api::MetaOf(o).labels));
        });
      },
  });
}

Controller::~Controller() { Stop(); }

kube::Informer& Controller::AddInformer(const kube::Resource& r, const std::string& ns,
                                        const std::string& label_selector,
                                        std::vector<const kube::Store*>* stores) {
  kube::ListOptions sel;
  sel.label_selector = label_selector;
  kube::InformerOptions io;
  io.resync_period = r.kind == core::kKind
                         ? std::chrono::duration_cast<kube::Clock::Duration>(options_.resync_period)
                         : kube::Clock::Duration::zero();
  Logger log = logger_.With({{"informer", r.resource}, {"namespace", ns.empty() ? "*" : ns}});
  io.on_error = [log](const Status& s) { log.Warn("informer error", {{"error", s.ToString()}}); };
  io.transform = CacheTransformFor(r);  // only the fields the operator reads are cached
  io.keep = CacheKeepFor(r);
  io.indexed_labels = Caches::IndexedLabels();
  io.page_size = kListPageSize;
  informers_.push_back(std::make_unique<kube::Informer>(client_, r, ns, sel, io));
  stores->push_back(&informers_.back()->store());
  return *informers_.back();
}

void Controller::StartInformers() {
  for (auto& inf : informers_) {
    informer_threads_.emplace_back(
        [inf = inf.get()](const std::stop_token& stop) { inf->Run(stop); });
  }
}

bool Controller::HasSynced() const {
  return std::all_of(informers_.begin(), informers_.end(),
                     [](const auto& i) { return i->HasSynced(); });
}

bool Controller::WaitForSync(const std::stop_token& stop, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& inf : informers_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !inf->WaitForSync(stop, left)) return false;
  }
  return true;
}

void Controller::Stop() {
  for (auto& t : informer_threads_) t.request_stop();
  informer_threads_.clear();  // joins
  events_->Stop();
}

void Controller::Enqueue(const std::string& key, const char* source, bool urgent) {
  if (key.empty()) return;
  if (urgent) {
    queue_->AddUrgent(key);
  } else {
    queue_->Add(key);
  }
  if (metrics_ != nullptr) {
    metrics_->CountEnqueue(source);
    metrics_->CountQueueAdd(options_.queue_name);
    metrics_->SetQueueDepth(options_.queue_name, static_cast<int>(queue_->Len()));
  }
}

void Controller::EnqueueByLabel(const Json& obj, const char* source) {
  Safely(logger_, "by-label", [&] {
    if (auto key = OwnerKey(obj)) Enqueue(*key, source);
  });
}

void Controller::EnqueueConsumer(const Json& pod) {
  if (auto key = ConsumerKey(pod)) Enqueue(*key, "gate");
}

void Controller::RememberSelector(const Json& kc) {
  Safely(logger_, "kernelcache", [&] { selectors_.Set(kube::ObjectKey(kc), NodeSelectorOf(kc)); });
}

void Controller::ForgetSelector(const Json& kc) {
  Safely(logger_, "kernelcache", [&] {
    const std::string key = kube::ObjectKey(kc);
    selectors_.Erase(key);
    if (auto slash = key.find('/'); slash != std::string::npos) {
      misses_.ForgetKernelCache(key.substr(0, slash), key.substr(slash + 1));
    }
  });
}

void Controller::EnqueueForNode(const LabelSet& labels) {
  EnqueueSelecting([&](const auto& selector) { return NodeSelectorMatches(selector, labels); });
}

void Controller::EnqueueForNodeChange(const NodeView& before, const NodeView& after) {
  EnqueueSelecting(
      [&](const auto& selector) { return NodeChangeConcerns(selector, before, after); });
}

void Controller::EnqueueSelecting(
    const std::function<bool(const std::map<std::string, std::string>&)>& concerns) {
  // Urgent: a node change can move a fingerprint, whose warmup Job users
  // wait for; it goes ahead of the status churn of running warmups.
  for (const std::string& key : selectors_.KeysWhere(concerns)) {
    Enqueue(key, "node", /*urgent=*/true);
  }
}

void Controller::EnqueueForPvc(const Json& pvc) {
  Safely(logger_, "pvc", [&] {
    for (const std::string& key : PvcKeys(pvc, Caches::All(caches_.kernelcaches))) {
      Enqueue(key, "pvc");
    }
  });
}

void Controller::Worker() {
  const std::string& qn = options_.queue_name;
  while (auto key = queue_->Get()) {
    if (metrics_ != nullptr) metrics_->SetQueueDepth(qn, static_cast<int>(queue_->Len()));
    const auto start = std::chrono::steady_clock::now();
    // Reconcile never throws (it turns an exception into an error on that
    // object); an error here is retried with backoff like any other.
    ReconcileResult r = reconciler_->Reconcile(*key);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string result = "success";
    if (!r.status.ok()) {
      result = "error";
      const int retries = queue_->NumRequeues(*key);
      Json fields = {{"kernelcache", *key}, {"error", r.status.ToString()}, {"retries", retries}};
      if (IsConflict(r.status)) {
        logger_.Info("reconcile conflict, retrying with a fresher cache", fields);
      } else {
        logger_.Error("reconcile failed", fields);
      }
      queue_->AddRateLimited(*key);
      if (metrics_ != nullptr) metrics_->CountQueueRetry(qn);
    } else if (r.stale_cache) {
      result = "requeue";
      logger_.Debug("caches behind the API server; retrying", {{"kernelcache", *key}});
      queue_->AddRateLimited(*key);
    } else if (r.status_deferred) {
      result = "status_deferred";
      queue_->Forget(*key);
      queue_->Add(*key);  // dirty while processing: queued again at Done
    } else if (r.requeue_after) {
      result = "requeue_after";
      queue_->Forget(*key);
      queue_->AddAfter(*key, std::chrono::duration_cast<kube::Clock::Duration>(
                                 std::max(*r.requeue_after, std::chrono::seconds(1))));
    } else {
      queue_->Forget(*key);
    }
    if (metrics_ != nullptr) metrics_->ObserveReconcile(qn, result, secs);
    queue_->Done(*key);
  }
}

void Controller::RunWorkers(const std::stop_token& stop) {
  logger_.Info("waiting for informer caches to sync");
  if (!WaitForSync(stop, std::chrono::hours(24))) return;
  logger_.Info("caches synced; starting workers", {{"workers", options_.workers}});
  for (const Json& kc : Caches::All(caches_.kernelcaches)) Enqueue(kube::ObjectKey(kc), "start");
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(options_.workers));
  for (int i = 0; i < options_.workers; ++i) workers.emplace_back([this] { Worker(); });
  {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, stop, [] { return false; });
  }
  logger_.Info("stopping workers: draining the queue");
  queue_->ShutDownWithDrain();
  for (auto& w : workers) w.join();
  logger_.Info("workers stopped");
}

ResolveResponse Controller::Resolve(const ResolveQuery& q) const {
  ResolveInputs in;
  if (auto kc_json = Caches::Get(caches_.kernelcaches, q.ns + "/" + q.kernelcache)) {
    Observed o = reconciler_->Observe(*kc_json);
    in.kc = o.kc;
    in.parse_errors = o.parse_errors;
    in.nodes = o.nodes;
    in.jobs = o.jobs;
    in.pods = o.pods;
    in.unschedulable_grace = o.settings.unschedulable_grace;
  }
  if (auto node = node_index_.Get(q.node)) in.node = std::move(*node);
  return op::Resolve(q, in, std::chrono::system_clock::now());
}

std::vector<core::KernelCache> Controller::KernelCachesIn(const std::string& ns) const {
  std::vector<core::KernelCache> out;
  for (const Json& kc : Caches::All(caches_.kernelcaches)) {
    if (api::MetaString(kc, "namespace") == ns) {
      core::KernelCache parsed = core::KernelCacheFromJson(kc);
      std::vector<std::string> ignored;  // the reconciler reports them
      ResolveWorkload(&parsed, caches_, &ignored);
      out.push_back(std::move(parsed));
    }
  }
  return out;
}

std::optional<kube::Json> Controller::GatedPod(const std::string& ns,
                                               const std::string& name) const {
  return Caches::Get(caches_.gated_pods, ns + "/" + name);
}

std::optional<kube::Json> Controller::KernelCacheObject(const std::string& ns,
                                                        const std::string& name) const {
  return Caches::Get(caches_.kernelcaches, ns + "/" + name);
}

}  // namespace kc::op
