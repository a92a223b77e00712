// Fuzz target: the decoders of the cluster objects the operator watches:
// the views Decide reads (operator/decide/views.h: Node, Job, Pod, PVC) and the
// typed api/ decoders (Node, Job, Pod, PVC, Lease). Input: a list
// response, {"items": [...]}; each item is decoded by its "kind" (every
// decoder when the kind is unknown), then Decide runs on a fixed
// KernelCache with the decoded nodes, Jobs, Pods and claim. Properties: no
// crash, no exception; the plan serialises (strict UTF-8); a Lease
// re-encodes.
#include <cstddef>
#include <cstdint>

#include "api/job.h"
#include "api/lease.h"
#include "api/node.h"
#include "api/pod.h"
#include "api/pvc.h"
#include "core/api_types.h"
#include "fuzz/util.h"
#include "operator/decide/decide.h"
#include "operator/decide/views.h"

namespace {

using kc::op::Json;

const kc::op::Time kNow = kc::api::ParseTime("2026-12-02T10:00:00Z").value();

const kc::core::KernelCache& BaseKernelCache() {
  static const kc::core::KernelCache kc = kc::core::KernelCacheFromJson(Json::parse(R"({
    "apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"name": "llama", "namespace": "ml", "uid": "kc-uid", "generation": 2,
                 "finalizers": ["kernelcache.io/cleanup"],
                 "creationTimestamp": "2026-12-01T10:00:00Z"},
    "spec": {
      "podSelector": {"matchLabels": {"app": "llama"}},
      "nodeSelector": {"nvidia.com/gpu.present": "true"},
      "image": "registry.example/llama@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "runtime": {"pytorch": "2.11.0", "triton": "3.6.0"},
      "warmup": {"command": ["python3", "/app/warmup.py"], "backoffLimit": 2},
      "storage": {"size": "20Gi", "storageClassName": "nfs"},
      "consume": {"mode": "Copy", "waitTimeoutSeconds": 900, "onTimeout": "Fail"}
    }})"));
  return kc;
}

void Decode(const Json& item, const std::string& kind, kc::op::Observed* o) {
  const bool any = kind != "Node" && kind != "Job" && kind != "Pod" &&
                   kind != "PersistentVolumeClaim" && kind != "Lease";
  if (any || kind == "Node") {
    o->nodes.push_back(kc::op::NodeViewFromJson(item));
    (void)item.get<kc::api::Node>();
  }
  if (any || kind == "Job") {
    o->jobs.push_back(kc::op::JobViewFromJson(item));
    (void)item.get<kc::api::Job>();
  }
  if (any || kind == "Pod") {
    o->pods.push_back(kc::op::PodViewFromJson(item));
    (void)item.get<kc::api::Pod>();
  }
  if (any || kind == "PersistentVolumeClaim") {
    o->pvc = kc::op::PvcViewFromJson(item, o->kc.metadata.uid);
    (void)item.get<kc::api::PersistentVolumeClaim>();
  }
  if (any || kind == "Lease") {
    const auto lease = item.get<kc::api::Lease>();
    (void)Json(lease).dump();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = Json::parse(kc::fuzz::AsText(data, size), nullptr, false);
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array()) return 0;
  kc::op::Observed o;
  o.kc = BaseKernelCache();
  for (const Json& item : j["items"]) {
    const Json* kind = item.is_object() && item.contains("kind") ? &item["kind"] : nullptr;
    Decode(item, kind != nullptr && kind->is_string() ? kind->get<std::string>() : "", &o);
  }
  const kc::op::Plan p = kc::op::Decide(o, kNow);
  (void)kc::core::StatusToJson(p.status).dump();
  for (const kc::op::Action& a : p.actions) {
    (void)a.object.dump();
    (void)Json(a.event_message).dump();
  }
  return 0;
}
