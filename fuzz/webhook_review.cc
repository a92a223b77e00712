// libFuzzer target: arbitrary bytes as the body of POST
// /mutate-pods and /validate-kernelcaches. Properties, checked on every
// input (a violation traps, so the fuzzer reports it):
//   - neither handler throws or crashes; every answer is 200 with an
//     AdmissionReview, or 4xx/5xx with {"error": "..."}, and parses as JSON;
//   - for a decodable pod review, Mutate's own patch applied to the pod
//     gives the mutated pod, and mutating that again gives an empty patch
//     (idempotence).
// Built with clang as `fuzz_webhook_review` (-fsanitize=fuzzer,address,
// undefined), and under any compiler as `fuzz_webhook_review_replay`, which runs
// the committed corpus (fuzz/corpus/webhook_review/) through the same
// function in ctest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "operator/webhook/admission_review.h"
#include "operator/webhook/json_patch.h"
#include "operator/webhook/mutate.h"
#include "operator/webhook/review.h"

namespace {

using kc::webhook::Json;

std::vector<kc::core::KernelCache> Caches(const std::string& ns) {
  std::vector<kc::core::KernelCache> out;
  for (const char* name : {"llama", "shared", "rw"}) {
    kc::core::KernelCache kc;
    kc.metadata.name = name;
    kc.metadata.namespace_ = ns;
    kc.spec.storage.size = "20Gi";
    out.push_back(kc);
  }
  out[0].spec.pod_selector.match_labels = {{"app", "llama"}};
  out[1].spec.pod_selector.match_expressions = {{"tier", "In", {"gpu", "a"}}};
  out[1].spec.consume.mode = kc::core::ConsumeMode::kShared;
  out[1].spec.consume.verify = kc::core::Level::kLoadTest;
  out[2].spec.pod_selector.match_expressions = {{"rw", "Exists", {}}};
  out[2].spec.consume.mode = kc::core::ConsumeMode::kSharedReadWrite;
  out[2].spec.storage = {"", "", "team", true};
  return out;
}

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckAnswer(const kc::webhook::ReviewAnswer& a) {
  const Json j = Json::parse(a.body, nullptr, false);
  Check(!j.is_discarded());
  if (a.http_status == 200) {
    Check(j.contains("response") && j["response"].is_object());
  } else {
    Check(a.http_status >= 400 && j.contains("error"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const kc::webhook::InjectSettings settings = {"initwarm:test", "http://op:8080",
                                                "kernelcache-system", "fuzz"};
  CheckAnswer(kc::webhook::ReviewPodMutation(body, Caches, settings));
  // "nfs" exists, "static" is only named by a PersistentVolume, "down" is
  // not answered; any other class neither exists nor is named.
  CheckAnswer(kc::webhook::ReviewKernelCacheValidation(body, Caches, [](const std::string& name) {
    using kc::webhook::Known;
    if (name == "nfs") return kc::webhook::StorageClassFacts{Known::kYes, Known::kUnknown};
    if (name == "static") return kc::webhook::StorageClassFacts{Known::kNo, Known::kYes};
    if (name == "down") return kc::webhook::StorageClassFacts{};
    return kc::webhook::StorageClassFacts{Known::kNo, Known::kNo};
  }));

  auto req = kc::webhook::DecodeAdmissionReview(body);
  if (!req.ok() || !req->object.is_object()) return 0;
  const std::string ns = req->ns.empty() ? "ml" : req->ns;
  auto first = kc::webhook::Mutate(req->object, ns, Caches(ns), settings);
  auto applied = kc::webhook::ApplyPatch(req->object, first.patch);
  Check(applied.ok() && *applied == first.pod);
  auto second = kc::webhook::Mutate(first.pod, ns, Caches(ns), settings);
  Check(second.patch.empty());
  return 0;
}
