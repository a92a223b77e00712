// The miss report: the runtime misses of one gated pod's view, as
// `initwarm misses --json` prints it and the operator will read it.
//
//   {"fingerprint": "<16 hex>", "misses": [
//     {"framework": "triton", "key": "<hash>", "detail": "kernel k ...",
//      "files": 8, "bytes": 120034}, ...],
//    "harvest": {"files": n, "bytes": n, "sha256": "<64 hex>"}}
//
// "harvest" (spec.harvest.mode Merge only, absent otherwise): the list of
// files the watcher copied into the volume's inbox for the operator's
// harvest (core/harvest.h), by its count, bytes and sha256.
//
// ParseMissReport checks every field's type, the fingerprint id, each
// framework name (core/runtime_miss.h) and the bounds below; unknown fields
// are ignored (a newer initwarm, an older operator). Errors are
// InvalidArgument naming the field ("misses[3].framework: ..."). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/harvest.h"
#include "core/runtime_miss.h"

namespace kc::core {

// At most this many misses in one report (the encoder keeps the first), and
// at most this many bytes in a key or detail.
inline constexpr std::size_t kMaxReportedMisses = 256;
inline constexpr std::size_t kMaxMissTextBytes = 512;

struct MissReport {
  std::string fingerprint;
  std::vector<RuntimeMiss> misses;
  std::optional<HarvestListRef> harvest{};
  friend bool operator==(const MissReport&, const MissReport&) = default;
};

std::string MissReportToJson(const MissReport& r);
StatusOr<MissReport> ParseMissReport(std::string_view json);

// The operator's 200 answer to a report (core/miss_channel.h):
//   {"accepted": <misses counted>, "new": <not reported before by this pod>,
//    "dropped": <over the operator's caps>}
struct MissReportAnswer {
  std::uint64_t accepted = 0;
  std::uint64_t fresh = 0;  // "new"
  std::uint64_t dropped = 0;
  friend bool operator==(const MissReportAnswer&, const MissReportAnswer&) = default;
};

std::string MissReportAnswerToJson(const MissReportAnswer& a);
StatusOr<MissReportAnswer> ParseMissReportAnswer(std::string_view json);

}  // namespace kc::core
