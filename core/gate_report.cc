#include "core/gate_report.h"

#include <array>
#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/enum_name.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxQuarantined = 4;

// Cuts to at most `n` bytes without splitting a UTF-8 sequence.
std::string Cut(const std::string& s, size_t n) { return TruncateUtf8(s, n); }

Status Str(const Json& j, const char* key, std::string* out, std::string_view where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_string()) {
    return InvalidArgumentError("gate report field \"" + std::string(where) + key +
                                "\" is not a string");
  }
  *out = it->get<std::string>();
  return OkStatus();
}

Json Encode(const GateReport& r, size_t message_max, size_t reason_max) {
  Json q = Json::array();
  for (size_t i = 0; i < r.quarantined.size() && i < kMaxQuarantined; ++i) {
    const GateQuarantine& g = r.quarantined[i];
    q.push_back({{"fingerprint", Cut(g.fingerprint, 64)},
                 {"expectedDigest", Cut(g.expected_digest, 64)},
                 {"foundDigest", Cut(g.found_digest, 64)},
                 {"level", Cut(g.level, 32)},
                 {"file", Cut(g.file, 200)},
                 {"reason", Cut(g.reason, reason_max)},
                 {"movedTo", Cut(g.moved_to, 200)}});
  }
  Json j = {{"outcome", std::string(GateOutcomeName(r.outcome))},
            {"reason", Cut(r.reason, 64)},
            {"fingerprint", Cut(r.fingerprint, 64)},
            {"manifestDigest", Cut(r.manifest_digest, 64)},
            {"message", Cut(r.message, message_max)},
            {"view", Cut(r.view, 200)},
            {"target", Cut(r.target, 200)},
            {"waitedMs", r.waited_ms},
            {"quarantined", std::move(q)}};
  if (!r.parity.empty()) j["parity"] = Cut(r.parity, 400);
  return j;
}

}  // namespace

StatusOr<GateOutcome> ParseGateOutcome(std::string_view name) {
  static constexpr std::array kAll = {GateOutcome::kWarm, GateOutcome::kCold, GateOutcome::kFailed};
  return ParseEnumName<GateOutcome>(name, kAll, GateOutcomeName);
}

std::string GateReportToJson(const GateReport& r) {
  // Shrink the free-text fields until the object fits the kubelet's cap.
  for (size_t message_max = 1200, reason_max = 400;; message_max /= 2, reason_max /= 2) {
    std::string out =
        Encode(r, message_max, reason_max).dump(-1, ' ', false, Json::error_handler_t::replace);
    if (out.size() <= kMaxReportBytes || message_max < 16) return out;
  }
}

StatusOr<GateReport> ParseGateReport(std::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("gate report is not a JSON object (starts \"" +
                                std::string(text.substr(0, 60)) + "\")");
  }
  GateReport r;
  std::string outcome;
  KC_RETURN_IF_ERROR(Str(j, "outcome", &outcome, ""));
  KC_RETURN_IF_ERROR(Str(j, "reason", &r.reason, ""));
  KC_RETURN_IF_ERROR(Str(j, "fingerprint", &r.fingerprint, ""));
  KC_RETURN_IF_ERROR(Str(j, "manifestDigest", &r.manifest_digest, ""));
  KC_RETURN_IF_ERROR(Str(j, "message", &r.message, ""));
  KC_RETURN_IF_ERROR(Str(j, "view", &r.view, ""));
  KC_RETURN_IF_ERROR(Str(j, "target", &r.target, ""));
  KC_RETURN_IF_ERROR(Str(j, "parity", &r.parity, ""));
  auto parsed = ParseGateOutcome(outcome);
  if (!parsed.ok()) return parsed.status().WithContext("gate report field \"outcome\"");
  r.outcome = *parsed;
  if (auto it = j.find("waitedMs"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) {
      return InvalidArgumentError("gate report field \"waitedMs\" is not an integer");
    }
    r.waited_ms = it->get<std::int64_t>();
  }
  if (auto it = j.find("quarantined"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      return InvalidArgumentError("gate report field \"quarantined\" is not an array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& e = (*it)[i];
      const std::string where = "quarantined[" + std::to_string(i) + "].";
      if (!e.is_object()) {
        return InvalidArgumentError("gate report field \"" + where.substr(0, where.size() - 1) +
                                    "\" is not an object");
      }
      GateQuarantine g;
      KC_RETURN_IF_ERROR(Str(e, "fingerprint", &g.fingerprint, where));
      KC_RETURN_IF_ERROR(Str(e, "expectedDigest", &g.expected_digest, where));
      KC_RETURN_IF_ERROR(Str(e, "foundDigest", &g.found_digest, where));
      KC_RETURN_IF_ERROR(Str(e, "level", &g.level, where));
      KC_RETURN_IF_ERROR(Str(e, "file", &g.file, where));
      KC_RETURN_IF_ERROR(Str(e, "reason", &g.reason, where));
      KC_RETURN_IF_ERROR(Str(e, "movedTo", &g.moved_to, where));
      r.quarantined.push_back(std::move(g));
    }
  }
  return r;
}

}  // namespace kc::core
