#include "core/seal_report.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/enum_name.h"
#include "core/fingerprint.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

bool IsHex(std::string_view s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

Status Bad(std::string_view field, std::string_view want) {
  return InvalidArgumentError("BadTerminationMessage: seal result field \"" + std::string(field) +
                              "\" " + std::string(want));
}

std::string OptStr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json SummaryToJson(const ConvergenceSummary& s) {
  return {{"passes", s.passes},
          {"converged", s.converged},
          {"lastEntries", s.last_entries},
          {"lastAutotune", s.last_autotune},
          {"still", s.still}};
}

StatusOr<ConvergenceSummary> SummaryFromJson(const Json& j) {
  if (!j.is_object()) return Bad("convergence", "must be an object");
  ConvergenceSummary s;
  auto passes = j.find("passes");
  if (passes == j.end() || !passes->is_number_integer() || passes->get<std::int64_t>() < 0 ||
      passes->get<std::int64_t>() > kMaxMaxPasses) {
    return Bad("convergence.passes", "must be an integer 0.." + std::to_string(kMaxMaxPasses));
  }
  s.passes = passes->get<std::int32_t>();
  auto converged = j.find("converged");
  if (converged == j.end() || !converged->is_boolean()) {
    return Bad("convergence.converged", "must be true or false");
  }
  s.converged = converged->get<bool>();
  for (auto [key, out] :
       {std::pair{"lastEntries", &s.last_entries}, std::pair{"lastAutotune", &s.last_autotune}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
      return Bad(std::string("convergence.") + key, "must be an integer >= 0");
    }
    *out = it->get<std::uint64_t>();
  }
  auto still = j.find("still");
  if (still != j.end()) {
    if (!still->is_array() || still->size() > kMaxSummaryEntries) {
      return Bad("convergence.still",
                 "must be an array of at most " + std::to_string(kMaxSummaryEntries) + " strings");
    }
    for (const auto& e : *still) {
      if (!e.is_string()) return Bad("convergence.still", "must hold strings");
      s.still.push_back(TruncateUtf8(e.get<std::string>(), kMaxSummaryEntryBytes));
    }
  }
  return s;
}

}  // namespace

std::string_view SealOutcomeName(SealOutcome o) {
  switch (o) {
    case SealOutcome::kPublished:
      return "Published";
    case SealOutcome::kReplaced:
      return "Replaced";
    case SealOutcome::kFailed:
      return "Failed";
  }
  return "Failed";
}

StatusOr<SealOutcome> ParseSealOutcome(std::string_view name) {
  return ParseEnumName<SealOutcome>(name, kSealOutcomes, SealOutcomeName);
}

std::string SealReportToJson(const SealReport& r) {
  Json j = {{"fingerprint", r.fingerprint}, {"outcome", SealOutcomeName(r.outcome)}};
  if (r.outcome == SealOutcome::kFailed) {
    j["reason"] = r.reason;
    j["message"] = r.message;
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  j["manifestDigest"] = r.manifest_digest;
  j["bytes"] = r.bytes;
  j["files"] = r.files;
  j["directory"] = r.directory;
  Json d = Json::object();
  for (const auto& [phase, ms] : r.durations_ms) {
    if (ms == static_cast<double>(static_cast<std::int64_t>(ms))) {
      d[phase + "Ms"] = static_cast<std::int64_t>(ms);
    } else {
      d[phase + "Ms"] = ms;
    }
  }
  j["durations"] = std::move(d);
  if (!r.replaced_to.empty()) j["replacedTo"] = r.replaced_to;
  if (!r.warning.empty()) j["warning"] = r.warning;
  if (r.convergence) j["convergence"] = SummaryToJson(*r.convergence);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<SealReport> ParseSealReport(std::string_view message) {
  Json j = Json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    const std::string head = TruncateUtf8(message, 83);  // whole characters only
    return InvalidArgumentError(
        "BadTerminationMessage: the seal container's termination message is not a JSON "
        "object (starts \"" +
        head + "\"); is the initwarm image current?");
  }
  SealReport r;
  if (auto o = j.find("outcome"); o != j.end()) {  // absent: a success, Published
    auto outcome = o->is_string() ? ParseSealOutcome(o->get<std::string>())
                                  : StatusOr<SealOutcome>(InvalidArgumentError("not a string"));
    if (!outcome.ok()) return Bad("outcome", "must be Published, Replaced or Failed");
    r.outcome = *outcome;
  }
  if (r.outcome == SealOutcome::kFailed) {
    r.fingerprint = OptStr(j, "fingerprint");
    r.reason = OptStr(j, "reason");
    r.message = OptStr(j, "message");
    return r;
  }
  auto fp = j.find("fingerprint");
  if (fp == j.end() || !fp->is_string() || !IsFingerprintId(fp->get<std::string>())) {
    return Bad("fingerprint", "must be 16 lower-case hex digits");
  }
  r.fingerprint = fp->get<std::string>();
  auto md = j.find("manifestDigest");
  if (md == j.end() || !md->is_string() || !IsHex(md->get<std::string>(), 64)) {
    return Bad("manifestDigest", "must be a sha256 of 64 lower-case hex digits");
  }
  r.manifest_digest = md->get<std::string>();
  for (auto [key, out] : {std::pair{"bytes", &r.bytes}, std::pair{"files", &r.files}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) {
      return Bad(key, "must be an integer >= 0");
    }
    *out = it->get<std::int64_t>();
  }
  if (auto d = j.find("durations"); d != j.end() && !d->is_null()) {
    if (!d->is_object()) return Bad("durations", "must be an object of milliseconds");
    for (const auto& [k, v] : d->items()) {
      if (!v.is_number()) return Bad("durations." + k, "must be a number of milliseconds");
      std::string phase = k;
      if (phase.size() > 2 && phase.ends_with("Ms")) phase.resize(phase.size() - 2);
      r.durations_ms[phase] = v.get<double>();
    }
  }
  r.directory = OptStr(j, "directory");
  r.replaced_to = OptStr(j, "replacedTo");
  r.warning = OptStr(j, "warning");
  if (auto c = j.find("convergence"); c != j.end() && !c->is_null()) {
    KC_ASSIGN_OR_RETURN(r.convergence, SummaryFromJson(*c));
  }
  return r;
}

}  // namespace kc::core
