#include "core/miss_report.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/fingerprint.h"
#include "core/manifest.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

Status Bad(const std::string& field, std::string_view want) {
  return InvalidArgumentError("miss report: " + field + " " + std::string(want));
}

StatusOr<std::string> Text(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return Bad(where + key, "must be a string");
  std::string s = it->get<std::string>();
  if (s.size() > kMaxMissTextBytes) {
    return Bad(where + key, "is longer than " + std::to_string(kMaxMissTextBytes) + " bytes");
  }
  return s;
}

StatusOr<std::uint64_t> Count(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned())
    return Bad(where + key, "must be an integer >= 0");
  return it->get<std::uint64_t>();
}

StatusOr<RuntimeMiss> ParseMiss(const Json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where.substr(0, where.size() - 1), "must be an object");
  RuntimeMiss m;
  KC_ASSIGN_OR_RETURN(std::string fw, Text(j, "framework", where));
  auto f = ParseMissFramework(fw);
  if (!f.ok()) return Bad(where + "framework", f.status().message());
  m.framework = *f;
  KC_ASSIGN_OR_RETURN(m.key, Text(j, "key", where));
  KC_ASSIGN_OR_RETURN(m.detail, Text(j, "detail", where));
  KC_ASSIGN_OR_RETURN(m.files, Count(j, "files", where));
  KC_ASSIGN_OR_RETURN(m.bytes, Count(j, "bytes", where));
  return m;
}

StatusOr<Json> ParseObject(std::string_view text, const std::string& what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(what + ": not a JSON object (starts \"" + TruncateUtf8(text, 64) +
                                "\")");
  }
  return j;
}

}  // namespace

std::string MissReportToJson(const MissReport& r) {
  Json misses = Json::array();
  for (const RuntimeMiss& m : r.misses) {
    if (misses.size() == kMaxReportedMisses) break;
    misses.push_back({{"framework", MissFrameworkName(m.framework)},
                      {"key", TruncateUtf8(m.key, kMaxMissTextBytes)},
                      {"detail", TruncateUtf8(m.detail, kMaxMissTextBytes)},
                      {"files", m.files},
                      {"bytes", m.bytes}});
  }
  Json j = {{"fingerprint", r.fingerprint}, {"misses", std::move(misses)}};
  if (r.harvest) {
    j["harvest"] = {
        {"files", r.harvest->files}, {"bytes", r.harvest->bytes}, {"sha256", r.harvest->sha256}};
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<MissReport> ParseMissReport(std::string_view text) {
  KC_ASSIGN_OR_RETURN(Json j, ParseObject(text, "miss report"));
  MissReport r;
  auto fp = j.find("fingerprint");
  if (fp == j.end() || !fp->is_string() || !IsFingerprintId(fp->get<std::string>())) {
    return Bad("fingerprint", "must be 16 lower-case hex digits");
  }
  r.fingerprint = fp->get<std::string>();
  auto ms = j.find("misses");
  if (ms == j.end() || !ms->is_array()) return Bad("misses", "must be an array");
  if (ms->size() > kMaxReportedMisses) {
    return Bad("misses", "has more than " + std::to_string(kMaxReportedMisses) + " entries");
  }
  for (std::size_t i = 0; i < ms->size(); ++i) {
    KC_ASSIGN_OR_RETURN(RuntimeMiss m, ParseMiss((*ms)[i], "misses[" + std::to_string(i) + "]."));
    r.misses.push_back(std::move(m));
  }
  auto hs = j.find("harvest");
  if (hs == j.end()) return r;
  if (!hs->is_object()) return Bad("harvest", "must be an object");
  HarvestListRef h;
  KC_ASSIGN_OR_RETURN(h.files, Count(*hs, "files", "harvest."));
  KC_ASSIGN_OR_RETURN(h.bytes, Count(*hs, "bytes", "harvest."));
  KC_ASSIGN_OR_RETURN(h.sha256, Text(*hs, "sha256", "harvest."));
  if (!IsSha256Hex(h.sha256)) return Bad("harvest.sha256", "must be 64 lower-case hex digits");
  r.harvest = std::move(h);
  return r;
}

std::string MissReportAnswerToJson(const MissReportAnswer& a) {
  return Json{{"accepted", a.accepted}, {"new", a.fresh}, {"dropped", a.dropped}}.dump();
}

StatusOr<MissReportAnswer> ParseMissReportAnswer(std::string_view text) {
  KC_ASSIGN_OR_RETURN(Json j, ParseObject(text, "miss report answer"));
  MissReportAnswer a;
  const std::string where = "answer.";
  KC_ASSIGN_OR_RETURN(a.accepted, Count(j, "accepted", where));
  KC_ASSIGN_OR_RETURN(a.fresh, Count(j, "new", where));
  KC_ASSIGN_OR_RETURN(a.dropped, Count(j, "dropped", where));
  return a;
}

}  // namespace kc::core
