#include "operator/webhook/admission_review.h"

#include "api/json_read.h"
#include "base/base64.h"

namespace kc::webhook {
namespace {

using api::Field;
using api::Read;

GroupVersionName ReadGvk(const Json& j, const char* name_key) {
  GroupVersionName g;
  Read(j, "group", &g.group);
  Read(j, "version", &g.version);
  Read(j, name_key, &g.name);
  return g;
}

Status WrongType(const char* field, const char* want) {
  return InvalidArgumentError(std::string(field) + " must be " + want);
}

}  // namespace

bool JsonDeeperThan(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body) {
  if (body.empty()) return InvalidArgumentError("empty body: want an AdmissionReview (JSON)");
  if (JsonDeeperThan(body, kMaxJsonDepth)) {
    return InvalidArgumentError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels");
  }
  const Json j = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("body is not valid JSON");
  if (!j.is_object()) return InvalidArgumentError("body must be a JSON object (AdmissionReview)");
  std::string api_version, kind;
  Read(j, "apiVersion", &api_version);
  Read(j, "kind", &kind);
  if (api_version != kAdmissionApiVersion) {
    return InvalidArgumentError(
        "apiVersion \"" + api_version.substr(0, 64) + "\": want " +
        std::string(kAdmissionApiVersion) +
        " (set admissionReviewVersions: [v1] in the webhook configuration)");
  }
  if (kind != kAdmissionReviewKind) {
    return InvalidArgumentError("kind \"" + kind.substr(0, 64) + "\": want AdmissionReview");
  }
  const Json* req = Field(j, "request");
  if (req == nullptr || req->is_null()) return InvalidArgumentError("request is missing");
  if (!req->is_object()) return WrongType("request", "an object");

  AdmissionRequest r;
  const Json* uid = Field(*req, "uid");
  if (uid == nullptr || uid->is_null()) return InvalidArgumentError("request.uid is missing");
  if (!uid->is_string()) return WrongType("request.uid", "a string");
  r.uid = uid->get<std::string>();
  if (r.uid.empty()) return InvalidArgumentError("request.uid is empty");
  r.kind = ReadGvk(api::Object(*req, "kind"), "kind");
  r.resource = ReadGvk(api::Object(*req, "resource"), "resource");
  Read(*req, "subResource", &r.sub_resource);
  Read(*req, "name", &r.name);
  Read(*req, "namespace", &r.ns);
  Read(*req, "operation", &r.operation);
  Read(*req, "dryRun", &r.dry_run);
  if (r.operation.empty()) return InvalidArgumentError("request.operation is missing");
  if (const Json* o = Field(*req, "object"); o != nullptr && !o->is_null()) {
    if (!o->is_object()) return WrongType("request.object", "an object");
    r.object = *o;
  }
  if (const Json* o = Field(*req, "oldObject"); o != nullptr && !o->is_null()) {
    if (!o->is_object()) return WrongType("request.oldObject", "an object");
    r.old_object = *o;
  }
  if ((r.operation == "CREATE" || r.operation == "UPDATE") && r.object.is_null()) {
    return InvalidArgumentError("request.object is missing (operation " + r.operation + ")");
  }
  return r;
}

std::string EncodeAdmissionReview(const AdmissionResponse& response) {
  Json r = {{"uid", response.uid}, {"allowed", response.allowed}};
  if (response.patch.is_array() && !response.patch.empty()) {
    r["patchType"] = "JSONPatch";
    r["patch"] = EncodeBase64(response.patch.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  if (!response.warnings.empty()) r["warnings"] = response.warnings;
  if (!response.allowed || !response.message.empty()) {
    Json status = {{"message", response.message}};
    const int code = response.code != 0 ? response.code : (response.allowed ? 200 : 403);
    status["code"] = code;
    if (!response.allowed) status["reason"] = code == 403 ? "Forbidden" : "BadRequest";
    r["status"] = std::move(status);
  }
  Json review = {{"apiVersion", kAdmissionApiVersion},
                 {"kind", kAdmissionReviewKind},
                 {"response", std::move(r)}};
  return review.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ErrorBody(std::string_view message) {
  return Json{{"error", std::string(message)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kc::webhook
