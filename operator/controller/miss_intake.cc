#include "operator/controller/miss_intake.h"

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

StatusOr<MissSource> SourceFromGatedPod(const TokenIdentity& id, const std::optional<Json>& pod,
                                        const core::MissReport& report) {
  const std::string who = id.ns + "/" + id.pod;
  if (!pod || !pod->is_object()) {
    return PermissionDeniedError("pod " + who + " is not a gated pod this operator knows");
  }
  const Json meta = pod->value("metadata", Json::object());
  if (!meta.is_object() || meta.value("uid", "") != id.pod_uid) {
    return PermissionDeniedError("pod " + who + " has another uid than the token's");
  }
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

HttpResponse HandleMissReport(const HttpRequest& req, const MissIntake& intake) {
  if (intake.leading && !intake.leading()) {
    return ErrorResponse(UnavailableError("this replica is not the leader; retry"));
  }
  if (req.body.size() > core::kMaxMissReportBytes) {
    return ErrorResponse(
        ResourceExhaustedError("the report has " + std::to_string(req.body.size()) +
                               " bytes; at most " + std::to_string(core::kMaxMissReportBytes)));
  }
  auto token = BearerToken(req.authorization);
  if (!token.ok()) return ErrorResponse(token.status());
  auto answer = intake.review(TokenReviewRequest(*token));
  if (!answer.ok()) {
    return ErrorResponse(UnavailableError("TokenReview: " + answer.status().message()));
  }
  auto id = IdentityFromTokenReview(*answer);
  if (!id.ok()) return ErrorResponse(id.status());
  auto report = core::ParseMissReport(req.body);
  if (!report.ok()) return ErrorResponse(report.status());
  auto src = SourceFromGatedPod(*id, intake.gated_pod(id->ns, id->pod), *report);
  if (!src.ok()) return ErrorResponse(src.status());
  const MissRecord rec = intake.ledger->Record(*src, report->misses, intake.now(), report->harvest);
  if (intake.on_record) intake.on_record(*src, rec);
  core::MissReportAnswer result{static_cast<std::uint64_t>(rec.accepted), 0,
                                static_cast<std::uint64_t>(rec.dropped)};
  for (const auto& [f, n] : rec.new_for_pod) result.fresh += static_cast<std::uint64_t>(n);
  return {200, "application/json", core::MissReportAnswerToJson(result)};
}

}  // namespace kc::op
