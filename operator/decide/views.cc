#include "operator/decide/views.h"

#include "api/job.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pvc.h"
#include "base/numbers.h"
#include "base/utf8.h"
#include "core/exit_codes.h"
#include "core/seal_report.h"

namespace kc::op {
namespace {

// "1.5", "2k" are not GPU counts; a plain non-negative integer is (a JSON
// number reaches here as its text).
int64_t Count(const std::string& s) {
  auto v = ParseInt64(s, "nvidia.com/gpu", 0);
  return v.ok() ? *v : 0;
}

// A condition's lastTransitionTime; nullopt when absent (the epoch).
std::optional<Time> TransitionTime(const api::Condition& c) {
  if (c.last_transition_time == Time{}) return std::nullopt;
  return c.last_transition_time;
}

}  // namespace

NodeView NodeViewFromJson(const Json& json) {
  api::Node node;
  from_json(json, node);
  NodeView v;
  v.name = node.metadata.name;
  v.labels = node.metadata.labels;
  v.unschedulable = node.unschedulable;
  v.ready = node.Ready();
  if (auto it = node.allocatable.find("nvidia.com/gpu"); it != node.allocatable.end()) {
    v.gpu_allocatable = Count(it->second);
  }
  return v;
}

JobView JobViewFromJson(const Json& json) {
  api::Job job;
  from_json(json, job);
  JobView v;
  v.name = job.metadata.name;
  v.uid = job.metadata.uid;
  if (json.is_object() && json.contains("spec")) {
    const Json& spec = json["spec"];
    static const Json kNone;
    const Json& tspec =
        spec.is_object() && spec.contains("template") && spec["template"].is_object()
            ? spec["template"].value("spec", kNone)
            : kNone;
    v.parts = KeptPodParts(spec, tspec);
  }
  v.labels = job.metadata.labels;
  v.annotations = job.metadata.annotations;
  v.deleting = job.metadata.BeingDeleted();
  v.foreground_deletion = std::find(job.metadata.finalizers.begin(), job.metadata.finalizers.end(),
                                    "foregroundDeletion") != job.metadata.finalizers.end();
  v.created = job.metadata.creation_timestamp.value_or(Time{});
  v.active = job.active;
  v.succeeded = job.succeeded;
  v.failed = job.failed;
  v.finished = job.completion_time;
  for (const api::Condition& c : job.conditions) {
    if (c.status != "True") continue;
    if (c.type == "Complete") {
      v.complete = true;
    } else if (c.type == "Failed") {
      v.failed_condition = true;
      v.failure_reason = c.reason;
      v.failure_message = c.message;
      if (!v.finished) v.finished = TransitionTime(c);
    }
  }
  return v;
}

PodView PodViewFromJson(const Json& json) {
  api::Pod pod;
  from_json(json, pod);
  PodView v;
  v.name = pod.metadata.name;
  v.labels = pod.metadata.labels;
  // The Job that owns the pod, by its controller reference (set by the Job
  // controller; labels such as job-name are anyone's to set).
  if (const api::OwnerReference* owner = pod.metadata.ControllerRef();
      owner != nullptr && owner->kind == "Job" && owner->api_version == "batch/v1") {
    v.job_name = owner->name;
    v.job_uid = owner->uid;
    if (json.is_object() && json.contains("spec"))
      v.parts = KeptPodParts(json["spec"], json["spec"]);
  }
  v.created = pod.metadata.creation_timestamp.value_or(Time{});
  v.node_name = pod.node_name;
  v.phase = pod.phase;
  for (const api::Condition& c : pod.conditions) {
    if (c.type != "PodScheduled" || c.status != "False" || c.reason != "Unschedulable") continue;
    // No time: since the pod was created (never in the future of it).
    v.unschedulable_since = TransitionTime(c).value_or(v.created);
    v.unschedulable_message = TruncateUtf8(c.message, 512);
  }
  // Main containers first: in a server warmup the server runs as a native
  // sidecar (an init container) that the kubelet kills (exit 137) once the
  // driver, the main container, has failed; the driver says why.
  for (const auto* list : {&pod.container_statuses, &pod.init_container_statuses}) {
    for (const api::ContainerStatus& cs : *list) {
      if (!cs.terminated) continue;
      const api::ContainerStateTerminated& term = *cs.terminated;
      if (cs.name == kSealContainer || cs.name == kHarvestContainer) {
        v.seal_exit_code = term.exit_code;
        v.seal_message = term.message;
      }
      if (cs.name == kWarmupContainer && term.exit_code == 0 && term.started_at &&
          term.finished_at && *term.finished_at >= *term.started_at) {
        v.warmup_seconds =
            std::chrono::duration<double>(*term.finished_at - *term.started_at).count();
      }
      if (term.exit_code != 0 && v.failure_summary.empty()) {
        std::string text = term.message;
        if (cs.name == kSealContainer || cs.name == kHarvestContainer) {
          // seal's failure report: its reason and message, not the JSON.
          auto report = core::ParseSealReport(term.message);
          if (report.ok() && report->outcome == core::SealOutcome::kFailed) {
            text = report->reason + ": " + report->message;
          }
          if (term.exit_code == core::kExitRefused) {
            text.insert(
                0, "the warmup's output was refused (fix the warmup: a retry writes the same): ");
          }
        }
        // Never cut a character: the status must stay UTF-8.
        const std::string msg = TruncateUtf8(text, 303);
        v.failure_summary = cs.name + ": " + term.reason + " (exit " +
                            std::to_string(term.exit_code) + ")" + (msg.empty() ? "" : ": " + msg);
      }
    }
  }
  return v;
}

PvcView PvcViewFromJson(const Json& json, const std::string& owner_uid) {
  api::PersistentVolumeClaim pvc;
  from_json(json, pvc);
  PvcView v;
  v.name = pvc.metadata.name;
  v.uid = pvc.metadata.uid;
  v.deleting = pvc.metadata.BeingDeleted();
  v.created = pvc.metadata.creation_timestamp.value_or(Time{});
  for (const api::OwnerReference& ref : pvc.metadata.owner_references) {
    if (!owner_uid.empty() && ref.uid == owner_uid) v.owned_by_us = true;
  }
  v.phase = pvc.phase;
  v.access_modes = pvc.status_access_modes.empty() ? pvc.access_modes : pvc.status_access_modes;
  return v;
}

bool JobChangeMatters(const Json& before, const Json& after) {
  return JobViewFromJson(before) != JobViewFromJson(after);
}

bool PodChangeMatters(const Json& before, const Json& after) {
  return PodViewFromJson(before) != PodViewFromJson(after);
}

}  // namespace kc::op
