// Fuzz target: the KernelCache decoder, ValidateSpec and Decide
// (core/api_types.h, core/spec_validation.h, operator/decide/decide.h). Input: a
// KernelCache as JSON, decoded as the informer's object would be, then
// decided twice: with an empty cluster view, and with one H200 node and a
// bound claim (so Decide reaches fingerprints and warmup Jobs).
// Properties: no crash, no exception; the decoded object re-encodes; every
// plan serialises as the REST client sends it (strict UTF-8: dump() throws
// on invalid bytes); a spec with decode errors never creates a Job or a
// claim.
#include <cstddef>
#include <cstdint>

#include "core/api_types.h"
#include "core/spec_validation.h"
#include "fuzz/util.h"
#include "operator/decide/decide.h"

namespace {

using kc::op::Action;

const kc::op::Time kNow = kc::api::ParseTime("2026-12-02T10:00:00Z").value();

void Serialise(const kc::op::Plan& p) {
  (void)kc::core::StatusToJson(p.status).dump();
  for (const Action& a : p.actions) {
    (void)a.object.dump();
    (void)kc::op::Json(a.event_message).dump();
  }
}

void DecideAndCheck(const kc::op::Observed& o) {
  const kc::op::Plan p = kc::op::Decide(o, kNow);
  Serialise(p);
  if (o.parse_errors.empty()) return;
  for (const Action& a : p.actions) {
    kc::fuzz::Check(a.kind != Action::Kind::kCreateJob && a.kind != Action::Kind::kCreatePvc);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = kc::op::Json::parse(kc::fuzz::AsText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  kc::op::Observed o;
  o.kc = kc::core::KernelCacheFromJson(j, &o.parse_errors);
  (void)kc::core::KernelCacheToJson(o.kc).dump();
  (void)kc::core::ValidateSpec(o.kc.spec);
  DecideAndCheck(o);

  kc::op::NodeView node;
  node.name = "gpu-0";
  node.labels = {{"nvidia.com/gpu.present", "true"},
                 {"nvidia.com/gpu.product", "NVIDIA-H200"},
                 {"nvidia.com/gpu.compute.major", "9"},
                 {"nvidia.com/gpu.compute.minor", "0"},
                 {"nvidia.com/cuda.driver-version.full", "580.159.04"},
                 {"nvidia.com/cuda.runtime-version.full", "13.0"},
                 {"kubernetes.io/arch", "amd64"}};
  node.gpu_allocatable = 8;
  o.nodes = {node};
  kc::op::PvcView pvc;
  pvc.name = kc::core::ClaimName(o.kc);
  pvc.phase = "Bound";
  pvc.access_modes = {"ReadWriteMany"};
  pvc.owned_by_us = true;
  o.pvc = pvc;
  DecideAndCheck(o);
  return 0;
}
