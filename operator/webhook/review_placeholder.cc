// PLACEHOLDER, REPLACED AT MERGE by the webhook-mutate branch's review.cc
// (the real Mutate and validator behind operator/webhook/review.h).
//
// Only what the serving half's tests need: decodes an AdmissionReview
// without throwing (400 on garbage), allows every request, and for a pod
// labelled kernelcache.io/test-mutate: "true" answers a JSON Patch adding the
// annotation kernelcache.io/injected: "placeholder", so the integration tests
// see a mutation travel through the real API server. Validation allows all.
#include <nlohmann/json.hpp>

#include "kube/config.h"
#include "operator/webhook/review.h"

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

ReviewAnswer BadRequest(const std::string& msg) { return {400, Json{{"error", msg}}.dump(), {}}; }

// The request object, or an error answer.
bool DecodeReview(std::string_view body, Json* request, ReviewAnswer* error) {
  Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded() || !review.is_object()) {
    *error = BadRequest("body is not a JSON object");
    return false;
  }
  if (review.value("apiVersion", Json()) != "admission.k8s.io/v1" ||
      review.value("kind", Json()) != "AdmissionReview") {
    *error = BadRequest("expected apiVersion admission.k8s.io/v1, kind AdmissionReview");
    return false;
  }
  auto req = review.find("request");
  if (req == review.end() || !req->is_object() || !req->contains("uid") ||
      !(*req)["uid"].is_string()) {
    *error = BadRequest("request.uid missing");
    return false;
  }
  *request = *req;
  return true;
}

std::string Answer(const Json& request, const Json& patch) {
  Json response = {{"uid", request["uid"]}, {"allowed", true}};
  if (!patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = kube::EncodeBase64(patch.dump());
  }
  return Json{
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"response", response}}
      .dump();
}

}  // namespace

ReviewAnswer ReviewPodMutation(std::string_view body, const KernelCacheLister& list,
                               const InjectSettings& settings) {
  Json request;
  ReviewAnswer error;
  if (!DecodeReview(body, &request, &error)) return error;
  Json patch = Json::array();
  const Json* pod = request.contains("object") ? &request["object"] : nullptr;
  if (pod != nullptr && pod->is_object()) {
    const Json meta = pod->value("metadata", Json::object());
    const Json labels = meta.is_object() ? meta.value("labels", Json::object()) : Json::object();
    if (labels.is_object() && labels.value("kernelcache.io/test-mutate", Json()) == "true") {
      const Json annotations = meta.is_object() ? meta.value("annotations", Json()) : Json();
      if (!annotations.is_object()) {
        patch.push_back({{"op", "add"},
                         {"path", "/metadata/annotations"},
                         {"value", {{"kernelcache.io/injected", "placeholder"}}}});
      } else if (!annotations.contains("kernelcache.io/injected")) {
        patch.push_back({{"op", "add"},
                         {"path", "/metadata/annotations/kernelcache.io~1injected"},
                         {"value", "placeholder"}});
      }
    }
  }
  return {200, Answer(request, patch), {}};
}

ReviewAnswer ReviewKernelCacheValidation(std::string_view body, const KernelCacheLister& list,
                                         const StorageClassExists& storage_class_exists) {
  Json request;
  ReviewAnswer error;
  if (!DecodeReview(body, &request, &error)) return error;
  return {200, Answer(request, Json::array()), {}};
}

}  // namespace kc::webhook
