#include "operator/controller/reconciler.h"

#include <algorithm>
#include <exception>

#include "api/meta.h"
#include "base/utf8.h"
#include "core/api_types.h"
#include "operator/controller/gate_reports.h"
#include "operator/controller/miss_ledger.h"
#include "operator/controller/workloads.h"
#include "operator/decide/decide.h"
#include "operator/decide/eligibility.h"
#include "operator/decide/views.h"

namespace kc::op {

namespace resources {
const kube::Resource& KernelCaches() {
  static const kube::Resource r{std::string(core::kGroup), std::string(core::kVersion),
                                std::string(core::kPlural), std::string(core::kKind), true};
  return r;
}
}  // namespace resources

namespace {

using Json = kube::Json;

double Seconds(Time a, Time b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

namespace {
kube::EventRecorderOptions RecorderOptions(const Logger& logger, const std::string& identity) {
  kube::EventRecorderOptions o;
  o.component = "kernelcache-operator";
  o.host = identity;
  o.queue = 1024;
  o.on_error = [logger](const Status& s) {
    logger.Warn("cannot record Event", {{"error", s.ToString()}});
  };
  return o;
}
}  // namespace

ClientEventSink::ClientEventSink(kube::Client& client, const Logger& logger,
                                 const std::string& identity)
    : recorder_(client, RecorderOptions(logger, identity)) {}

void ClientEventSink::Emit(const Json& involved, const std::string& type, const std::string& reason,
                           const std::string& message) {
  recorder_.Event(kube::ReferenceTo(involved),
                  type == "Warning" ? kube::EventType::kWarning : kube::EventType::kNormal, reason,
                  message);
}

Reconciler::Reconciler(kube::Client& client, Caches caches, Settings settings, EventSink* events,
                       OperatorMetrics* metrics, Logger logger, std::function<Time()> now)
    : client_(client),
      caches_(std::move(caches)),
      settings_(std::move(settings)),
      events_(events),
      metrics_(metrics),
      logger_(std::move(logger)),
      now_(std::move(now)) {}

Observed Reconciler::Observe(const Json& kc_json) const {
  Observed o;
  o.kc = core::KernelCacheFromJson(kc_json, &o.parse_errors);
  ResolveWorkload(&o.kc, caches_, &o.parse_errors);
  o.settings = settings_;
  const std::string& ns = o.kc.metadata.namespace_;
  const std::string& name = o.kc.metadata.name;
  if (caches_.nodes != nullptr) o.nodes = caches_.nodes->Selected(o.kc.spec.node_selector);
  for (const Json& j : Caches::ByLabel(caches_.jobs, ns, kLabelName, name)) {
    o.jobs.push_back(JobViewFromJson(j));
  }
  for (const Json& p : Caches::ByLabel(caches_.pods, ns, kLabelName, name)) {
    o.pods.push_back(PodViewFromJson(p));
  }
  for (const Json& p : Caches::ByLabel(caches_.gated_pods, ns, core::kConsumerLabel, name)) {
    for (auto& r : GateReportsFromPod(p)) o.gate_reports.push_back(std::move(r));
  }
  ObserveMisses(o);
  if (auto pvc = Caches::Get(caches_.pvcs, ns + "/" + core::ClaimName(o.kc))) {
    o.pvc = PvcViewFromJson(*pvc, o.kc.metadata.uid);
  }
  return o;
}

void Reconciler::ObserveMisses(Observed& o) const {
  o.runtime_misses.clear();
  if (caches_.misses == nullptr) return;
  const std::string& ns = o.kc.metadata.namespace_;
  const std::string& name = o.kc.metadata.name;
  for (const auto& f : o.kc.status.fingerprints) {
    if (f.manifest_digest.empty()) continue;
    if (auto m = caches_.misses->Summary(ns, name, f.id, f.manifest_digest)) {
      o.runtime_misses[f.id] = {f.manifest_digest, std::move(*m),
                                caches_.misses->Harvestable(ns, name, f.id, f.manifest_digest)};
    }
  }
}

Status Reconciler::Execute(const Action& a, const core::KernelCache& kc,
                           std::string* resource_version, std::vector<std::string>* finalizers,
                           bool* stale, const Logger& log) {
  const std::string& ns = kc.metadata.namespace_;
  switch (a.kind) {
    case Action::Kind::kAddFinalizer:
    case Action::Kind::kRemoveFinalizer: {
      std::vector<std::string> next = *finalizers;
      next.erase(std::remove(next.begin(), next.end(), a.name), next.end());
      if (a.kind == Action::Kind::kAddFinalizer) next.push_back(a.name);
      if (next == *finalizers) return OkStatus();
      Json patch = {{"metadata", {{"finalizers", next}, {"resourceVersion", *resource_version}}}};
      auto r = client_.Patch(resources::KernelCaches(), ns, kc.metadata.name,
                             kube::PatchType::kMerge, patch);
      if (!r.ok()) {
        if (a.kind == Action::Kind::kRemoveFinalizer && IsNotFound(r.status())) return OkStatus();
        return r.status();
      }
      *finalizers = next;
      if (std::string rv = api::MetaString(*r, "resourceVersion"); !rv.empty()) {
        *resource_version = rv;
      }
      log.Info(a.kind == Action::Kind::kAddFinalizer ? "finalizer added" : "finalizer removed",
               {{"finalizer", a.name}});
      return OkStatus();
    }
    case Action::Kind::kCreatePvc:
    case Action::Kind::kCreateJob: {
      const kube::Resource& r = a.kind == Action::Kind::kCreateJob
                                    ? kube::resources::kJobs
                                    : kube::resources::kPersistentVolumeClaims;
      auto created = client_.Create(r, ns, a.object);
      if (!created.ok() && !IsAlreadyExists(created.status())) return created.status();
      if (!created.ok()) *stale = true;
      const std::string name = api::MetaString(a.object, "name");
      Json fields = {{"object", r.resource + "/" + (name.empty() ? a.name : name)}};
      if (auto fp = a.object["metadata"]["labels"].find(kLabelFingerprint);
          fp != a.object["metadata"]["labels"].end()) {
        fields["fingerprint"] = *fp;
      }
      if (created.ok()) {
        log.Info("created", fields);
      } else {
        log.Debug("already exists (cache behind)", fields);
      }
      return OkStatus();
    }
    case Action::Kind::kDeleteJob:
    case Action::Kind::kCancelJob:
    case Action::Kind::kDeletePvc: {
      const kube::Resource& r = a.kind == Action::Kind::kDeletePvc
                                    ? kube::resources::kPersistentVolumeClaims
                                    : kube::resources::kJobs;
      kube::DeleteOptions opts;
      opts.propagation = a.kind == Action::Kind::kCancelJob ? kube::PropagationPolicy::kForeground
                                                            : kube::PropagationPolicy::kBackground;
      if (!a.uid.empty()) opts.precondition_uid = a.uid;
      Status s = client_.Delete(r, ns, a.name, opts);
      if (!s.ok() && !IsNotFound(s) && !IsConflict(s)) return s;
      log.Info(s.ok() ? "deleted" : "already gone", {{"object", r.resource + "/" + a.name}});
      return OkStatus();
    }
    case Action::Kind::kEmitEvent:
      return OkStatus();  // after the status write
  }
  return OkStatus();
}

ReconcileResult Reconciler::Reconcile(const std::string& key) noexcept {
  std::string what;
  try {
    return ReconcileOnce(key);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  ReconcileResult result;
  result.status =
      InternalError(TruncateUtf8("reconcile of " + key + " failed unexpectedly: " + what, 2048));
  try {
    logger_.Error("reconcile failed unexpectedly; the key is retried with backoff",
                  {{"kernelcache", key}, {"error", result.status.message()}});
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging is best effort
  }
  ReportUnexpected(key, what);
  return result;
}

void Reconciler::ReportUnexpected(const std::string& key, const std::string& what) {
  try {
    auto kc_json = Caches::Get(caches_.kernelcaches, key);
    if (!kc_json) return;
    // The pass may have written the object before it failed: patch on top
    // of what the server has now (this path is rare; one GET is cheap).
    {
      std::vector<std::string> ignored;
      const api::ObjectMeta meta = api::MetadataFromJson(
          kc_json->contains("metadata") ? (*kc_json)["metadata"] : Json::object(), &ignored);
      auto fresh = client_.Get(resources::KernelCaches(), meta.namespace_, meta.name);
      if (fresh.ok()) kc_json = *fresh;
    }
    std::vector<std::string> ignored;
    core::KernelCache kc = core::KernelCacheFromJson(*kc_json, &ignored);
    const std::string message = TruncateUtf8(
        "the operator failed unexpectedly while reconciling this KernelCache (" + what +
            "); it retries with backoff. Please report this with the operator's log",
        1000);
    api::Condition c;
    c.type = std::string(core::condition::kDegraded);
    c.status = "True";
    c.reason = "ReconcileError";
    c.message = message;
    c.observed_generation = kc.metadata.generation;
    c.last_transition_time =
        std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
    auto& conds = kc.status.conditions;
    auto it = std::find_if(conds.begin(), conds.end(),
                           [&](const api::Condition& x) { return x.type == c.type; });
    if (it != conds.end()) {
      if (it->status == c.status) c.last_transition_time = it->last_transition_time;
      *it = c;
    } else {
      conds.push_back(c);
    }
    Json status = core::StatusToJson(kc.status);
    Json patch = {{"metadata", {{"resourceVersion", kc.metadata.resource_version}}},
                  {"status", {{"conditions", status["conditions"]}, {"phase", "Degraded"}}}};
    kube::PatchOptions opts;
    opts.subresource = "status";
    auto r = client_.Patch(resources::KernelCaches(), kc.metadata.namespace_, kc.metadata.name,
                           kube::PatchType::kMerge, patch, opts);
    if (!r.ok()) {
      logger_.Warn("cannot record the reconcile error in status",
                   {{"kernelcache", key}, {"error", r.status().ToString()}});
    }
    if (events_ != nullptr) events_->Emit(*kc_json, "Warning", "ReconcileError", message);
  } catch (const std::exception& e) {
    try {
      logger_.Warn("cannot record the reconcile error",
                   {{"kernelcache", key}, {"error", e.what()}});
    } catch (...) {  // NOLINT(bugprone-empty-catch)
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): best effort
  }
}

void Reconciler::Forget(const std::string& key) {
  const auto slash = key.find('/');
  const std::string key_ns = key.substr(0, slash);
  const std::string key_name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (metrics_ != nullptr) metrics_->ForgetKernelCache(key_ns, key_name);
  std::lock_guard<std::mutex> l(mu_);
  gates_.erase(key);
  owed_.erase(key);
  for (auto it = first_seen_.lower_bound(key + "/");
       it != first_seen_.end() && it->first.rfind(key + "/", 0) == 0;) {
    it = first_seen_.erase(it);
  }
}

Reconciler::Observation Reconciler::ObserveOwing(const std::string& key, const Json& kc_json) {
  Observation ob{Observe(kc_json), {}, false, 0};
  // What the API server holds; the pass decides from the owed status, when
  // one is (step 4), and writes whatever differs from this.
  ob.written = ob.observed.kc.status;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = owed_.find(key); it != owed_.end()) {
      if (it->second.uid == ob.observed.kc.metadata.uid) {
        ob.observed.kc.status = it->second.status;
        ob.owed = true;
        ob.deferrals = it->second.deferrals;
      } else {
        owed_.erase(it);  // another object of that name
      }
    }
  }
  if (ob.owed) ObserveMisses(ob.observed);  // by the owed status's digests
  return ob;
}

Reconciler::Executed Reconciler::ExecuteAll(const Plan& plan, const core::KernelCache& kc,
                                            const Logger& log) {
  Executed done{Status(), kc.metadata.resource_version, kc.metadata.finalizers, false, false};
  for (const Action& a : plan.actions) {
    Status s = Execute(a, kc, &done.resource_version, &done.finalizers, &done.stale, log);
    if (!s.ok()) {
      done.status = s.WithContext(std::string(ActionKindName(a.kind)) + " " + a.name);
      return done;
    }
    done.job_written |= a.kind == Action::Kind::kCreateJob || a.kind == Action::Kind::kDeleteJob ||
                        a.kind == Action::Kind::kCancelJob;
  }
  return done;
}

Status Reconciler::WriteStatus(const std::string& key, const Json& kc_json, const Observation& ob,
                               const Plan& plan, const Executed& done, const Logger& log,
                               bool* deferred) {
  const core::KernelCache& kc = ob.observed.kc;
  const bool gone = kc.metadata.deletion_timestamp.has_value() &&
                    std::find(done.finalizers.begin(), done.finalizers.end(),
                              std::string(core::kFinalizer)) == done.finalizers.end();
  const bool changed = !(plan.status == ob.written);
  if (!gone && ob.deferrals < kMaxStatusDeferrals && done.job_written && changed &&
      urgent_waiting_ && urgent_waiting_()) {
    std::lock_guard<std::mutex> l(mu_);
    owed_[key] = Owed{kc.metadata.uid, plan.status, ob.deferrals + 1};
    *deferred = true;
    log.Debug("status write put off: urgent KernelCaches wait for a worker");
    return Status();
  }
  if (!gone && changed) {
    Json new_status = core::StatusToJson(plan.status);
    if (auto old = kc_json.find("status"); old != kc_json.end() && old->is_object()) {
      for (const auto& [k, v] : old->items()) {
        if (!new_status.contains(k)) new_status[k] = nullptr;  // merge patch: remove
      }
    }
    Json patch = {{"metadata", {{"resourceVersion", done.resource_version}}},
                  {"status", new_status}};
    kube::PatchOptions opts;
    opts.subresource = "status";
    auto r = client_.Patch(resources::KernelCaches(), kc.metadata.namespace_, kc.metadata.name,
                           kube::PatchType::kMerge, patch, opts);
    if (!r.ok()) return r.status().WithContext("status update");
    log.Info("status updated", {{"phase", plan.status.phase}, {"ready", plan.status.ready}});
  }
  if (ob.owed) {
    std::lock_guard<std::mutex> l(mu_);
    owed_.erase(key);
  }
  return Status();
}

void Reconciler::EmitEvents(const Json& kc_json, const Plan& plan, const Logger& log) {
  if (events_ == nullptr) return;
  for (const Action& a : plan.actions) {
    if (a.kind != Action::Kind::kEmitEvent) continue;
    events_->Emit(kc_json, a.event_type, a.event_reason, a.event_message);
    log.Info("event",
             {{"type", a.event_type}, {"reason", a.event_reason}, {"message", a.event_message}});
  }
}

// The steps of the header, in order; a failing one ends the pass.
ReconcileResult Reconciler::ReconcileOnce(const std::string& key) {
  ReconcileResult result;
  auto kc_json = Caches::Get(caches_.kernelcaches, key);
  if (!kc_json) {
    Forget(key);
    return result;
  }
  const Time now = now_();
  const Observation ob = ObserveOwing(key, *kc_json);  // 1
  const core::KernelCache& kc = ob.observed.kc;
  Logger log = logger_.With({{"kernelcache", key}, {"reconcileID", NewReconcileId()}});
  const Plan plan = Decide(ob.observed, now);       // 2
  const Executed done = ExecuteAll(plan, kc, log);  // 3
  if (!done.status.ok()) {
    result.status = done.status;
    return result;
  }
  if (done.stale) {  // 6
    result.stale_cache = true;
    return result;
  }
  result.status = WriteStatus(key, *kc_json, ob, plan, done, log, &result.status_deferred);  // 4
  if (!result.status.ok()) return result;
  EmitEvents(*kc_json, plan, log);  // 5
  RecordMetrics(key, kc, plan, ob.observed);
  result.requeue_after = plan.requeue_after;
  return result;
}

void Reconciler::RecordMetrics(const std::string& key, const core::KernelCache& kc,
                               const Plan& plan, const Observed& observed) {
  if (metrics_ == nullptr) return;
  const core::KernelCacheStatus& status = plan.status;
  std::map<std::string, int> by_state;
  double bytes = 0, files = 0;
  for (const auto& fs : status.fingerprints) {
    ++by_state[fs.state];
    if (fs.state == core::fp_state::kReady) {
      bytes += static_cast<double>(fs.bytes);
      files += static_cast<double>(fs.files);
    }
  }
  metrics_->SetKernelCache(kc.metadata.namespace_, kc.metadata.name, by_state, bytes, files);

  std::lock_guard<std::mutex> l(mu_);
  const Time now = now_();
  RecordGateRuns(key, kc, status, observed, now);
  for (const auto& fs : status.fingerprints) {
    const core::FingerprintStatus* old = nullptr;
    for (const auto& o : kc.status.fingerprints) {
      if (o.id == fs.id) old = &o;
    }
    const std::string seen_key = key + "/" + fs.id;
    if (fs.state != core::fp_state::kReady && first_seen_.count(seen_key) == 0) {
      first_seen_[seen_key] = now;
    }
    const JobView* job = nullptr;
    for (const auto& j : observed.jobs) {
      if (j.name == fs.job) job = &j;
    }
    const bool became_ready =
        fs.state == core::fp_state::kReady && (old == nullptr || old->state != fs.state);
    const bool failed_again = fs.failures > 0 && (old == nullptr || fs.failures > old->failures);
    if (became_ready) {
      if (auto it = first_seen_.find(seen_key); it != first_seen_.end()) {
        metrics_->ObserveTimeToReady(Seconds(it->second, fs.ready_at.value_or(now)));
        first_seen_.erase(it);
      }
      if (job != nullptr && job->finished) {
        metrics_->ObserveWarmup(WarmupOutcomeName(WarmupOutcome::kPublished),
                                Seconds(job->created, *job->finished));
      }
    } else if (failed_again && job != nullptr) {
      // The typed outcome Decide recorded, not the failure's text.
      auto rec = plan.recorded.find(fs.id);
      const WarmupOutcome outcome =
          rec != plan.recorded.end() && rec->second == WarmupOutcome::kMismatch
              ? WarmupOutcome::kMismatch
              : WarmupOutcome::kFailed;
      metrics_->ObserveWarmup(WarmupOutcomeName(outcome),
                              Seconds(job->created, job->finished.value_or(now)));
    }
  }
}

void Reconciler::RecordGateRuns(const std::string& key, const core::KernelCache& kc,
                                const core::KernelCacheStatus& status, const Observed& observed,
                                Time now) {
  if (!counting_since_) counting_since_ = std::chrono::time_point_cast<std::chrono::seconds>(now);
  const std::string& ns = kc.metadata.namespace_;
  const std::string& name = kc.metadata.name;
  GateLedger& ledger = gates_[key];
  std::map<std::string, double> seconds =
      WarmupSecondsByFingerprint(status.fingerprints, observed.pods, ledger.warmup_seconds);
  for (const auto& [fp, _] : ledger.warmup_seconds) {
    if (seconds.count(fp) == 0) metrics_->ForgetFingerprint(ns, name, fp);
  }
  ledger.warmup_seconds = std::move(seconds);
  GateTally t =
      TallyGateRuns(observed.gate_reports, ledger.counted, ledger.warmup_seconds, *counting_since_);
  ledger.counted = std::move(t.counted);
  for (const auto& [outcome, runs] : t.add.outcomes) {
    metrics_->CountGateOutcome(ns, name, outcome, runs);
  }
  for (const double w : t.add.waits) metrics_->ObserveGateWait(ns, name, w);
  for (const auto& [fp, secs] : t.add.saved) metrics_->AddCompileSecondsSaved(ns, name, fp, secs);
}

}  // namespace kc::op
