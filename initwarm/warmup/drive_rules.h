// The decisions of `initwarm drive` (drive.h), kept pure: how the command
// line splits at "--", what a reply of the server means, when to poll
// again, when to log progress, and when the staging tree has settled.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/warmup_plan.h"
#include "initwarm/net/http_exchange.h"

namespace kc::initwarm {

using DriveClock = std::chrono::steady_clock;

// The drive's own flags and the seal command after "--" (without the word
// "seal"). InvalidArgument when there is no "--" or what follows does not
// start with "seal".
struct DriveCommandLine {
  std::vector<std::string> drive;
  std::vector<std::string> seal;
};
StatusOr<DriveCommandLine> SplitDriveArgs(const std::vector<std::string>& args);

// How logs and errors name call `index`: `call 2 "prompt=512 #1" (POST /v1/completions)`.
std::string DescribeCall(size_t index, const core::WarmupCall& call);

// Whether a readiness reply says ready (any 2xx).
bool IsReadyStatus(unsigned status);

// What the reply to call `index` means: OK for a 2xx, else Unavailable
// naming the call, the status and the body's first 200 bytes.
Status CallReplyStatus(size_t index, const core::WarmupCall& call, const HttpReply& reply);

// When the readiness poll that began at `attempt_start` is followed by the
// next: `interval` after it began (at once when the poll took longer);
// nullopt when that is not before `deadline`, or `now` has reached it (no
// more polls: none would have time to answer).
std::optional<DriveClock::time_point> NextPoll(DriveClock::time_point attempt_start,
                                               DriveClock::time_point now,
                                               DriveClock::time_point deadline,
                                               std::chrono::milliseconds interval);

// Progress is logged sparsely: the first failure, then at most every 30 s.
inline constexpr std::chrono::seconds kDriveLogEvery{30};
bool ShouldLogProgress(std::optional<DriveClock::time_point> last_logged,
                       DriveClock::time_point now);

// One entry of the staging tree as the settle step sees it.
struct ListedEntry {
  std::string path;  // relative to the staging directory
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool dir = false;
  friend bool operator==(const ListedEntry&, const ListedEntry&) = default;
};
using TreeListing = std::vector<ListedEntry>;  // sorted by path

// Settled: the two looks list the same paths with the same sizes and
// modification times.
bool IsSettled(const TreeListing& before, const TreeListing& after);

}  // namespace kc::initwarm
