// The two admission handlers: decode (admission_review.h), decide
// (mutate.h, validate_kc.h), encode. Pure; no exception escapes.
#include "operator/webhook/review.h"

#include <exception>

#include "api/meta.h"
#include "operator/webhook/admission_review.h"
#include "operator/webhook/mutate.h"
#include "operator/webhook/validate_kc.h"

namespace kc::webhook {
namespace {

ReviewAnswer BadRequest(const Status& s) {
  ReviewAnswer a;
  a.http_status = 400;
  a.body = ErrorBody(s.message());
  return a;
}

ReviewAnswer Internal(const char* what) {
  ReviewAnswer a;
  a.http_status = 500;
  a.body = ErrorBody(std::string("internal error: ") + what);
  return a;
}

ReviewAnswer Answer(const AdmissionResponse& response) {
  ReviewAnswer a;
  a.body = EncodeAdmissionReview(response);
  return a;
}

std::vector<core::KernelCache> List(const KernelCacheLister& list, const std::string& ns) {
  if (!list) return {};
  return list(ns);
}

ReviewAnswer MutatePod(std::string_view body, const KernelCacheLister& list,
                       const InjectSettings& settings) {
  auto req = DecodeAdmissionReview(body);
  if (!req.ok()) return BadRequest(req.status());
  AdmissionResponse resp;
  resp.uid = req->uid;
  // Only new pods are mutated; another resource, subresource or operation
  // is admitted unchanged (the webhook configuration should not send them).
  if (req->kind.group != "" || req->kind.name != "Pod" || !req->sub_resource.empty() ||
      req->operation != "CREATE") {
    return Answer(resp);
  }
  std::string ns = req->ns;
  if (ns.empty()) ns = api::MetaOf(req->object).namespace_;
  MutationResult r = Mutate(req->object, ns, List(list, ns), settings);
  resp.patch = std::move(r.patch);
  resp.warnings = std::move(r.warnings);
  ReviewAnswer a = Answer(resp);
  // sideEffects: None: a dry run records nothing.
  if (!req->dry_run) a.events = std::move(r.events);
  return a;
}

ReviewAnswer ValidateCache(std::string_view body, const KernelCacheLister& list,
                           const StorageClassLookup& storage_class) {
  auto req = DecodeAdmissionReview(body);
  if (!req.ok()) return BadRequest(req.status());
  AdmissionResponse resp;
  resp.uid = req->uid;
  if (req->kind.group != core::kGroup || req->kind.name != core::kKind ||
      (req->operation != "CREATE" && req->operation != "UPDATE")) {
    return Answer(resp);
  }
  std::vector<std::string> errors;
  core::KernelCache kc = core::KernelCacheFromJson(req->object, &errors);
  if (kc.metadata.namespace_.empty()) kc.metadata.namespace_ = req->ns;
  if (kc.metadata.name.empty()) kc.metadata.name = req->name;
  if (!errors.empty()) {
    resp.allowed = false;
    resp.code = 422;
    resp.message =
        "KernelCache " + kc.metadata.name + " is malformed: " + errors.front() +
        (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : "");
    return Answer(resp);
  }
  // A KernelCache being deleted only loses finalizers; nothing to judge.
  if (kc.metadata.deletion_timestamp) return Answer(resp);
  KernelCacheVerdict v = ValidateKernelCache(kc, List(list, kc.metadata.namespace_), storage_class);
  resp.allowed = v.allowed;
  resp.warnings = v.warnings;
  if (!v.allowed) {
    resp.code = 403;
    std::string message = "KernelCache " + kc.metadata.name + " denied: ";
    for (size_t i = 0; i < v.denials.size(); ++i) {
      if (i > 0) message += " Also: ";
      message += v.denials[i];
    }
    resp.message = std::move(message);
  }
  return Answer(resp);
}

}  // namespace

ReviewAnswer ReviewPodMutation(std::string_view body, const KernelCacheLister& list,
                               const InjectSettings& settings) {
  try {
    return MutatePod(body, list, settings);
  } catch (const std::exception& e) {
    return Internal(e.what());
  } catch (...) {
    return Internal("unknown exception");
  }
}

ReviewAnswer ReviewKernelCacheValidation(std::string_view body, const KernelCacheLister& list,
                                         const StorageClassLookup& storage_class) {
  try {
    return ValidateCache(body, list, storage_class);
  } catch (const std::exception& e) {
    return Internal(e.what());
  } catch (...) {
    return Internal("unknown exception");
  }
}

}  // namespace kc::webhook
