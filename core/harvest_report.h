// The harvest result: what `initwarm harvest` (the harvest Job's "seal"
// container) prints as one JSON line and writes as its termination message
// (at most 4 KiB: the lists are short, the counts complete), and what the
// operator reads back from the pod status.
//
//   {"fingerprint", "outcome": "Merged" | "Unchanged" | "Failed",
//    "baseDigest": <the generation merged into>,
//    "manifestDigest": <the new generation's> (Merged),
//    "bytes", "files": the new generation's totals (Merged),
//    "addedFiles", "addedBytes", "addedEntries": ["triton/ab12", ...],
//    "conflictCount", "conflicts": [...], "rejectedCount", "rejected": [...],
//    "duplicateCount", "pods": <pods whose files were read>,
//    "reason", "message" (Failed)}
//
// Parse is strict about the types of the fields it reads, ignores unknown
// ones, never throws; errors are InvalidArgument starting
// "BadTerminationMessage: " and naming the field. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kc::core {

// What a harvest did: merged files into a new generation, found nothing to
// add, or failed. Also the fingerprint status's harvest.lastResult.
enum class HarvestOutcome { kMerged, kUnchanged, kFailed };
inline constexpr std::array<HarvestOutcome, 3> kHarvestOutcomes = {
    HarvestOutcome::kMerged, HarvestOutcome::kUnchanged, HarvestOutcome::kFailed};
// "Merged" | "Unchanged" | "Failed"
std::string_view HarvestOutcomeName(HarvestOutcome o);
StatusOr<HarvestOutcome> ParseHarvestOutcome(std::string_view name);

// At most this many names in each list, each at most kMaxHarvestNameBytes.
inline constexpr std::size_t kMaxHarvestListed = 5;
inline constexpr std::size_t kMaxHarvestNameBytes = 160;

struct HarvestReport {
  std::string fingerprint;
  HarvestOutcome outcome = HarvestOutcome::kFailed;
  std::string base_digest{};
  std::string manifest_digest{};
  std::int64_t bytes = 0;
  std::int64_t files = 0;
  std::int64_t added_files = 0;
  std::int64_t added_bytes = 0;
  std::vector<std::string> added_entries{};
  std::int64_t conflict_count = 0;
  std::vector<std::string> conflicts{};
  std::int64_t rejected_count = 0;
  std::vector<std::string> rejected{};
  std::int64_t duplicate_count = 0;
  std::int64_t pods = 0;
  std::string reason{};  // Failed
  std::string message{};
  friend bool operator==(const HarvestReport&, const HarvestReport&) = default;
};

// Truncates the lists to kMaxHarvestListed names of kMaxHarvestNameBytes.
std::string HarvestReportToJson(const HarvestReport& r);
StatusOr<HarvestReport> ParseHarvestReport(std::string_view json);

}  // namespace kc::core
