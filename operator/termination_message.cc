#include "operator/termination_message.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "core/fingerprint.h"

namespace kc::op {
namespace {

bool IsHex(std::string_view s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

Status Bad(std::string_view field, std::string_view want) {
  return InvalidArgumentError("BadTerminationMessage: seal result field \"" + std::string(field) +
                              "\" " + std::string(want));
}

}  // namespace

StatusOr<SealResult> ParseSealResult(std::string_view message) {
  nlohmann::json j = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    const std::string head = TruncateUtf8(message, 83);  // whole characters only
    return InvalidArgumentError(
        "BadTerminationMessage: the seal container's termination message is not a JSON "
        "object (starts \"" +
        head + "\"); is the initwarm image current?");
  }
  SealResult r;
  auto fp = j.find("fingerprint");
  if (fp == j.end() || !fp->is_string() || !core::IsFingerprintId(fp->get<std::string>())) {
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
    if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
      return Bad(key, "must be an integer >= 0");
    }
    *out = it->get<int64_t>();
  }
  if (auto d = j.find("durations"); d != j.end() && !d->is_null()) {
    if (!d->is_object()) return Bad("durations", "must be an object of milliseconds");
    for (const auto& [k, v] : d->items()) {
      if (!v.is_number()) return Bad("durations." + k, "must be a number of milliseconds");
      std::string phase = k;
      if (phase.size() > 2 && phase.ends_with("Ms")) phase.resize(phase.size() - 2);
      r.durations[phase] = v.get<double>() / 1000.0;
    }
  }
  return r;
}

StatusOr<SealResult> CheckSealResult(std::string_view message,
                                     std::string_view expected_fingerprint) {
  KC_ASSIGN_OR_RETURN(SealResult r, ParseSealResult(message));
  if (r.fingerprint != expected_fingerprint) {
    return FailedPreconditionError("FingerprintMismatch: sealed " + r.fingerprint + ", expected " +
                                   std::string(expected_fingerprint));
  }
  return r;
}

}  // namespace kc::op
