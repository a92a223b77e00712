#include "core/harvest_report.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/enum_name.h"
#include "core/fingerprint.h"
#include "core/manifest.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

Status Bad(std::string_view field, std::string_view want) {
  return InvalidArgumentError("BadTerminationMessage: harvest result field \"" +
                              std::string(field) + "\" " + std::string(want));
}

Json List(const std::vector<std::string>& names) {
  Json out = Json::array();
  for (const std::string& n : names) {
    if (out.size() == kMaxHarvestListed) break;
    out.push_back(TruncateUtf8(n, kMaxHarvestNameBytes));
  }
  return out;
}

Status ReadCount(const Json& j, const char* key, std::int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return OkStatus();
  if (!it->is_number_unsigned()) return Bad(key, "must be an integer >= 0");
  *out = static_cast<std::int64_t>(std::min<std::uint64_t>(it->get<std::uint64_t>(), INT64_MAX));
  return OkStatus();
}

Status ReadList(const Json& j, const char* key, std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end()) return OkStatus();
  if (!it->is_array()) return Bad(key, "must be an array of strings");
  for (const Json& n : *it) {
    if (!n.is_string()) return Bad(key, "must be an array of strings");
    if (out->size() < kMaxHarvestListed) {
      out->push_back(TruncateUtf8(n.get<std::string>(), kMaxHarvestNameBytes));
    }
  }
  return OkStatus();
}

std::string OptStr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? TruncateUtf8(it->get<std::string>(), 1024)
                                          : std::string();
}

}  // namespace

std::string_view HarvestOutcomeName(HarvestOutcome o) {
  switch (o) {
    case HarvestOutcome::kMerged:
      return "Merged";
    case HarvestOutcome::kUnchanged:
      return "Unchanged";
    case HarvestOutcome::kFailed:
      return "Failed";
  }
  return "Failed";
}

StatusOr<HarvestOutcome> ParseHarvestOutcome(std::string_view name) {
  return ParseEnumName<HarvestOutcome>(name, kHarvestOutcomes, HarvestOutcomeName);
}

std::string HarvestReportToJson(const HarvestReport& r) {
  Json j = {{"fingerprint", r.fingerprint}, {"outcome", HarvestOutcomeName(r.outcome)}};
  if (r.outcome == HarvestOutcome::kFailed) {
    j["reason"] = r.reason;
    j["message"] = TruncateUtf8(r.message, 1024);
    if (!r.base_digest.empty()) j["baseDigest"] = r.base_digest;
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  j["baseDigest"] = r.base_digest;
  if (r.outcome == HarvestOutcome::kMerged) {
    j["manifestDigest"] = r.manifest_digest;
    j["bytes"] = r.bytes;
    j["files"] = r.files;
  }
  j["addedFiles"] = r.added_files;
  j["addedBytes"] = r.added_bytes;
  j["addedEntries"] = List(r.added_entries);
  j["conflictCount"] = r.conflict_count;
  j["conflicts"] = List(r.conflicts);
  j["rejectedCount"] = r.rejected_count;
  j["rejected"] = List(r.rejected);
  j["duplicateCount"] = r.duplicate_count;
  j["pods"] = r.pods;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<HarvestReport> ParseHarvestReport(std::string_view message) {
  Json j = Json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(
        "BadTerminationMessage: the harvest result is not a JSON object "
        "(starts \"" +
        TruncateUtf8(message, 64) + "\")");
  }
  HarvestReport r;
  r.fingerprint = OptStr(j, "fingerprint");
  if (!IsFingerprintId(r.fingerprint)) return Bad("fingerprint", "must be 16 lower-case hex");
  auto outcome = ParseHarvestOutcome(OptStr(j, "outcome"));
  if (!outcome.ok()) return Bad("outcome", "must be Merged, Unchanged or Failed");
  r.outcome = *outcome;
  r.base_digest = OptStr(j, "baseDigest");
  if (!r.base_digest.empty() && !IsSha256Hex(r.base_digest)) {
    return Bad("baseDigest", "must be 64 lower-case hex digits");
  }
  if (r.outcome == HarvestOutcome::kFailed) {
    r.reason = OptStr(j, "reason");
    r.message = OptStr(j, "message");
    return r;
  }
  if (r.base_digest.empty()) return Bad("baseDigest", "must be 64 lower-case hex digits");
  if (r.outcome == HarvestOutcome::kMerged) {
    r.manifest_digest = OptStr(j, "manifestDigest");
    if (!IsSha256Hex(r.manifest_digest)) {
      return Bad("manifestDigest", "must be 64 lower-case hex digits");
    }
    KC_RETURN_IF_ERROR(ReadCount(j, "bytes", &r.bytes));
    KC_RETURN_IF_ERROR(ReadCount(j, "files", &r.files));
  }
  KC_RETURN_IF_ERROR(ReadCount(j, "addedFiles", &r.added_files));
  KC_RETURN_IF_ERROR(ReadCount(j, "addedBytes", &r.added_bytes));
  KC_RETURN_IF_ERROR(ReadList(j, "addedEntries", &r.added_entries));
  KC_RETURN_IF_ERROR(ReadCount(j, "conflictCount", &r.conflict_count));
  KC_RETURN_IF_ERROR(ReadList(j, "conflicts", &r.conflicts));
  KC_RETURN_IF_ERROR(ReadCount(j, "rejectedCount", &r.rejected_count));
  KC_RETURN_IF_ERROR(ReadList(j, "rejected", &r.rejected));
  KC_RETURN_IF_ERROR(ReadCount(j, "duplicateCount", &r.duplicate_count));
  KC_RETURN_IF_ERROR(ReadCount(j, "pods", &r.pods));
  return r;
}

}  // namespace kc::core
