#include "operator/decide/decide_step.h"

#include <algorithm>

#include "base/strings.h"
#include "base/utf8.h"

namespace kc::op::decide {

void Effects::Event(const std::string& type, const std::string& reason,
                    const std::string& message) {
  Action a;
  a.kind = Action::Kind::kEmitEvent;
  a.event_type = type;
  a.event_reason = reason;
  // events.k8s.io caps a note at 1 KiB; keep every message under it.
  a.event_message = TruncateUtf8(message, 1000);
  events.push_back(std::move(a));
}

void Effects::DeleteJob(const JobView& j) { RemoveJob(Action::Kind::kDeleteJob, j); }

void Effects::RemoveJob(Action::Kind kind, const JobView& j) {
  Action a;
  a.kind = kind;
  a.name = j.name;
  a.uid = j.uid;
  if (!j.deleting) actions.push_back(std::move(a));
}

void Effects::CancelWarmup(const JobView& j, core::FingerprintStatus& f) {
  if (!j.deleting) {
    RemoveJob(Action::Kind::kCancelJob, j);
    RememberStopped(f, j);
  } else if (j.foreground_deletion) {
    RememberStopped(f, j);
  }
}

void RememberStopped(core::FingerprintStatus& f, const JobView& j) {
  auto& uids = f.cancelled_job_uids;
  if (j.uid.empty() || j.complete || j.failed_condition) return;
  if (std::find(uids.begin(), uids.end(), j.uid) != uids.end()) return;
  uids.push_back(j.uid);
  if (uids.size() > core::kMaxCancelledJobs) {
    uids.erase(uids.begin(), uids.end() - static_cast<std::ptrdiff_t>(core::kMaxCancelledJobs));
  }
}

void Effects::WakeAt(Time t, Time now) {
  if (t <= now) t = now + seconds(1);
  if (!wake || t < *wake) wake = t;
}

void Effects::Append(Effects other) {
  for (auto& a : other.actions) actions.push_back(std::move(a));
  for (auto& e : other.events) events.push_back(std::move(e));
  if (other.wake && (!wake || *other.wake < *wake)) wake = other.wake;
}

bool Changed(const api::Condition* p, bool value, const std::string& reason) {
  return p == nullptr || p->status != (value ? "True" : "False") || p->reason != reason;
}

std::string ListSome(const std::vector<std::string>& v) {
  if (v.size() <= kMaxListed) return StrJoin(v, ", ");
  std::vector<std::string> head(v.begin(), v.begin() + kMaxListed);
  return StrJoin(head, ", ") + " and " + std::to_string(v.size() - kMaxListed) + " more";
}

std::string Describe(const core::FingerprintStatus& f) {
  return f.id + " (" + f.gpu_product + ", sm " + f.compute_capability + ", driver " + f.driver +
         ", CUDA " + f.cuda_driver + ", " + f.arch + ")";
}

bool Ours(const JobView& j, const std::string& kc_name) {
  auto it = j.labels.find(kLabelName);
  return it != j.labels.end() && it->second == kc_name;
}

std::string Component(const JobView& j) {
  auto it = j.labels.find(kLabelComponent);
  return it == j.labels.end() ? "warmup" : it->second;
}

std::string JobFingerprint(const JobView& j) {
  auto it = j.labels.find(kLabelFingerprint);
  return it == j.labels.end() ? "" : it->second;
}

bool WarmupOf(const JobView& j, const std::string& kc_name, const std::string& id) {
  return Ours(j, kc_name) && Component(j) == "warmup" && JobFingerprint(j) == id;
}

const JobView* FindJob(const std::vector<JobView>& jobs, const std::string& name) {
  for (const auto& j : jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

void SetState(core::FingerprintStatus& f, std::string_view state, Time now) {
  if (f.state == state) return;
  f.state = std::string(state);
  f.last_transition_time = std::chrono::time_point_cast<seconds>(now);
}

seconds Backoff(const Settings& s, int32_t failures) {
  seconds d = s.retry_base;
  for (int32_t i = 1; i < failures && d < s.retry_cap; ++i) d *= 2;
  return std::min(d, s.retry_cap);
}

Time RetryAt(const core::FingerprintStatus& f, const Settings& s, Time now) {
  return f.last_failure_time.value_or(now) + Backoff(s, std::max(f.failures, 1));
}

}  // namespace kc::op::decide
