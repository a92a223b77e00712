#include "operator/controller/miss_intake.h"

#include "api/json_read.h"
#include "core/api_types.h"
#include "core/gate_report.h"
#include "core/miss_channel.h"
#include "operator/controller/gate_reports.h"

namespace kc::op {
namespace {

const std::string* FirstExtra(const Json& user, const char* key) {
  auto extra = user.find("extra");
  if (extra == user.end() || !extra->is_object()) return nullptr;
  auto v = extra->find(key);
  if (v == extra->end() || !v->is_array() || v->empty() || !(*v)[0].is_string()) return nullptr;
  const auto* s = (*v)[0].get_ptr<const std::string*>();
  return s->empty() ? nullptr : s;
}

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 413;

    default:
      return 503;
  }
}

HttpResponse ErrorResponse(const Status& s) {
  return {HttpStatusOf(s), "application/json", Json{{"error", s.message()}}.dump()};
}

}  // namespace

StatusOr<std::string> BearerToken(const std::string& authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      authorization.compare(0, kBearer.size(), kBearer) != 0) {
    return UnauthenticatedError(
        "no bearer token: send the pod's projected ServiceAccount token (audience " +
        std::string(core::kMissTokenAudience) + ") as \"Authorization: Bearer <token>\"");
  }
  return authorization.substr(kBearer.size());
}

Json TokenReviewRequest(const std::string& token) {
  return {{"apiVersion", "authentication.k8s.io/v1"},
          {"kind", "TokenReview"},
          {"spec", {{"token", token}, {"audiences", Json::array({core::kMissTokenAudience})}}}};
}

StatusOr<TokenIdentity> IdentityFromTokenReview(const Json& review) {
  const Json* status =
      review.is_object() && review.contains("status") ? &review["status"] : nullptr;
  if (status == nullptr || !status->is_object() || !status->value("authenticated", false)) {
    std::string why = status != nullptr && status->is_object() ? status->value("error", "") : "";
    return UnauthenticatedError("the token was not authenticated for audience " +
                                std::string(core::kMissTokenAudience) +
                                (why.empty() ? "" : ": " + why));
  }
  bool audience = false;
  if (auto a = status->find("audiences"); a != status->end() && a->is_array()) {
    for (const Json& x : *a) audience |= x.is_string() && x == core::kMissTokenAudience;
  }
  if (!audience) {
    return UnauthenticatedError("the token is not for audience " +
                                std::string(core::kMissTokenAudience));
  }
  const Json user = status->value("user", Json::object());
  const std::string username = user.is_object() ? user.value("username", "") : "";
  constexpr std::string_view kSa = "system:serviceaccount:";
  const std::string* pod = user.is_object() ? FirstExtra(user, core::kPodNameExtra) : nullptr;
  const std::string* uid = user.is_object() ? FirstExtra(user, core::kPodUidExtra) : nullptr;
  if (username.compare(0, kSa.size(), kSa) != 0 || pod == nullptr || uid == nullptr) {
    return PermissionDeniedError("\"" + username +
                                 "\" is not a pod's ServiceAccount token (a projected "
                                 "serviceAccountToken volume of the reporting pod)");
  }
  const std::string rest = username.substr(kSa.size());
  const auto colon = rest.find(':');
  if (colon == std::string::npos || colon == 0) {
    return PermissionDeniedError("\"" + username + "\" names no namespace");
  }
  return TokenIdentity{rest.substr(0, colon), *pod, *uid};
}

Status CheckClaimedPod(const TokenClaims& claims, const std::optional<Json>& pod) {
  const std::string who = claims.ns + "/" + claims.pod;
  if (!pod || !pod->is_object()) {
    return PermissionDeniedError("pod " + who + " is not a gated pod this operator knows");
  }
  const Json meta = pod->value("metadata", Json::object());
  if (!meta.is_object() || meta.value("uid", "") != claims.pod_uid) {
    return PermissionDeniedError("pod " + who + " has another uid than the token's");
  }
  return OkStatus();
}

StatusOr<MissSource> SourceFromGatedPod(const TokenIdentity& id, const std::optional<Json>& pod,
                                        const core::MissReport& report) {
  const std::string who = id.ns + "/" + id.pod;
  KC_RETURN_IF_ERROR(CheckClaimedPod(TokenClaims{id.ns, id.pod, id.pod_uid, Time{}}, pod));
  const Json meta = pod->value("metadata", Json::object());
  std::string kernelcache;
  if (auto l = meta.find("labels"); l != meta.end() && l->is_object()) {
    kernelcache = l->value(core::kConsumerLabel, "");
  }
  if (kernelcache.empty()) {
    return PermissionDeniedError("pod " + who + " has no label " +
                                 std::string(core::kConsumerLabel));
  }
  const GateReportView* warm = nullptr;
  const std::vector<GateReportView> gates = GateReportsFromPod(*pod);
  for (const GateReportView& g : gates) {
    if (g.report.outcome == core::GateOutcome::kWarm && !g.report.fingerprint.empty()) warm = &g;
  }
  if (warm == nullptr) {
    return PermissionDeniedError("pod " + who + "'s gate has not reported Warm");
  }
  if (report.fingerprint != warm->report.fingerprint) {
    return PermissionDeniedError("the report's fingerprint " + report.fingerprint +
                                 " is not the one pod " + who + "'s gate handed it (" +
                                 warm->report.fingerprint + ")");
  }
  return MissSource{id.ns,  kernelcache, warm->report.fingerprint, warm->report.manifest_digest,
                    id.pod, id.pod_uid};
}

std::string MissEventMessage(const MissSource& src, const MissEventDue& due) {
  auto list = [](const std::vector<std::string>& items, const char* sep) {
    constexpr size_t kNamed = 5;
    constexpr size_t kItemBytes = 80;
    std::string out;
    for (size_t i = 0; i < items.size() && i < kNamed; ++i) {
      if (i > 0) out += sep;
      out += items[i].size() > kItemBytes ? items[i].substr(0, kItemBytes) + "..." : items[i];
    }
    if (items.size() > kNamed) out += " and " + std::to_string(items.size() - kNamed) + " more";
    return out;
  };
  return "pods compiled after their gate on fingerprint " + src.fingerprint + ": " +
         list(due.details, "; ") + " (pods: " + list(due.pods, ", ") +
         "); the warmup did not produce these: add the shapes to spec.warmup";
}

bool MayHarvestFrom(const Json& pod) {
  const Json* spec = pod.is_object() ? api::Field(pod, "spec") : nullptr;
  const Json* shared =
      spec != nullptr && spec->is_object() ? api::Field(*spec, "shareProcessNamespace") : nullptr;
  return shared == nullptr || !shared->is_boolean() || !shared->get<bool>();
}

Status CheckSourceInStatus(const MissSource& src, const std::optional<Json>& kernelcache) {
  const std::string name = src.ns + "/" + src.kernelcache;
  if (!kernelcache || !kernelcache->is_object()) {
    return PermissionDeniedError("KernelCache " + name + " (the pod's label " +
                                 std::string(core::kConsumerLabel) + ") does not exist");
  }
  const core::KernelCacheStatus status =
      core::StatusFromJson(kernelcache->value("status", Json::object()));
  for (const core::FingerprintStatus& f : status.fingerprints) {
    if (f.id != src.fingerprint) continue;
    if (!f.manifest_digest.empty() && f.manifest_digest == src.manifest_digest) return OkStatus();
    return PermissionDeniedError("KernelCache " + name + " records another manifest digest for " +
                                 "fingerprint " + src.fingerprint + " than the pod's gate");
  }
  return PermissionDeniedError("KernelCache " + name + " has no fingerprint " + src.fingerprint +
                               " in its status");
}

namespace {

// Checks that cost no API call: the leader, the size, the token's shape and
// claims, and that the pod it claims is a gated pod we know.
StatusOr<std::pair<std::string, TokenClaims>> Precheck(const HttpRequest& req,
                                                       const MissIntake& intake) {
  if (intake.leading && !intake.leading()) {
    return UnavailableError("this replica is not the leader; retry");
  }
  if (req.body.size() > core::kMaxMissReportBytes) {
    return ResourceExhaustedError("the report has " + std::to_string(req.body.size()) +
                                  " bytes; at most " + std::to_string(core::kMaxMissReportBytes));
  }
  KC_ASSIGN_OR_RETURN(std::string token, BearerToken(req.authorization));
  KC_ASSIGN_OR_RETURN(TokenClaims claims, ClaimsOfMissToken(token, intake.now()));
  KC_RETURN_IF_ERROR(CheckClaimedPod(claims, intake.gated_pod(claims.ns, claims.pod)));
  return std::pair{std::move(token), std::move(claims)};
}

// The token's identity: from the cache, or a TokenReview (kept on success).
StatusOr<TokenIdentity> Authenticate(const std::string& token, const TokenClaims& claims,
                                     const MissIntake& intake) {
  const Time now = intake.now();
  if (intake.reviews != nullptr) {
    if (auto id = intake.reviews->Lookup(token, now)) return *id;
  }
  auto answer = intake.review(TokenReviewRequest(token));
  if (!answer.ok()) return UnavailableError("TokenReview: " + answer.status().message());
  KC_ASSIGN_OR_RETURN(TokenIdentity id, IdentityFromTokenReview(*answer));
  if (id != TokenIdentity{claims.ns, claims.pod, claims.pod_uid}) {
    return UnauthenticatedError("the token's claims name another pod than its TokenReview");
  }
  if (intake.reviews != nullptr) intake.reviews->Store(token, id, claims.expires, now);
  return id;
}

StatusOr<HttpResponse> ReviewAndRecord(const HttpRequest& req, const std::string& token,
                                       const TokenClaims& claims, const MissIntake& intake) {
  KC_ASSIGN_OR_RETURN(TokenIdentity id, Authenticate(token, claims, intake));
  KC_ASSIGN_OR_RETURN(core::MissReport report, core::ParseMissReport(req.body));
  const std::optional<Json> pod = intake.gated_pod(id.ns, id.pod);
  KC_ASSIGN_OR_RETURN(MissSource src, SourceFromGatedPod(id, pod, report));
  if (pod && !MayHarvestFrom(*pod)) report.harvest.reset();
  KC_RETURN_IF_ERROR(CheckSourceInStatus(
      src, intake.kernelcache ? intake.kernelcache(src.ns, src.kernelcache) : std::nullopt));
  const MissRecord rec = intake.ledger->Record(src, report.misses, intake.now(), report.harvest);
  if (intake.on_record) intake.on_record(src, rec);
  core::MissReportAnswer result{static_cast<std::uint64_t>(rec.accepted), 0,
                                static_cast<std::uint64_t>(rec.dropped)};
  for (const auto& [f, n] : rec.new_for_pod) result.fresh += static_cast<std::uint64_t>(n);
  return HttpResponse{200, "application/json", core::MissReportAnswerToJson(result)};
}

}  // namespace

HttpResponse HandleMissReport(const HttpRequest& req, const MissIntake& intake) {
  auto pre = Precheck(req, intake);
  if (!pre.ok()) return ErrorResponse(pre.status());
  auto r = ReviewAndRecord(req, pre->first, pre->second, intake);
  return r.ok() ? *r : ErrorResponse(r.status());
}

void SubmitMissReport(HttpRequest req, HttpDone done, const MissIntake& intake,
                      BoundedWorkers& workers) {
  auto pre = Precheck(req, intake);
  if (!pre.ok()) return done(ErrorResponse(pre.status()));
  auto job = [req = std::move(req), pre = std::move(*pre), done, &intake] {
    auto r = ReviewAndRecord(req, pre.first, pre.second, intake);
    done(r.ok() ? *r : ErrorResponse(r.status()));
  };
  if (!workers.TrySubmit(std::move(job))) {
    done({429, "application/json",
          Json{{"error", "too many miss reports waiting for review; retry later"}}.dump()});
  }
}

}  // namespace kc::op
