#include "initwarm/warmup/drive_rules.h"

#include <algorithm>

#include "base/utf8.h"

namespace kc::initwarm {

StatusOr<DriveCommandLine> SplitDriveArgs(const std::vector<std::string>& args) {
  const auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes == args.end()) {
    return InvalidArgumentError(
        "missing \"-- seal ...\": the seal command to run once the server is warm");
  }
  if (dashes + 1 == args.end() || *(dashes + 1) != "seal") {
    return InvalidArgumentError("what follows \"--\" must be \"seal\" and its flags, not \"" +
                                (dashes + 1 == args.end() ? std::string() : *(dashes + 1)) + "\"");
  }
  return DriveCommandLine{{args.begin(), dashes}, {dashes + 2, args.end()}};
}

std::string DescribeCall(size_t index, const core::WarmupCall& call) {
  std::string out = "call " + std::to_string(index);
  if (!call.label.empty()) out += " \"" + call.label + "\"";
  return out + " (" + call.method + " " + call.path + ")";
}

bool IsReadyStatus(unsigned status) { return status >= 200 && status < 300; }

Status CallReplyStatus(size_t index, const core::WarmupCall& call, const HttpReply& reply) {
  if (IsReadyStatus(reply.status)) return OkStatus();
  return UnavailableError(DescribeCall(index, call) + " answered HTTP " +
                          std::to_string(reply.status) + ": " + TruncateUtf8(reply.body, 200));
}

std::optional<DriveClock::time_point> NextPoll(DriveClock::time_point attempt_start,
                                               DriveClock::time_point now,
                                               DriveClock::time_point deadline,
                                               std::chrono::milliseconds interval) {
  const auto next = attempt_start + interval;
  if (now >= deadline || next >= deadline) return std::nullopt;
  return next;
}

bool ShouldLogProgress(std::optional<DriveClock::time_point> last_logged,
                       DriveClock::time_point now) {
  return !last_logged || now - *last_logged >= kDriveLogEvery;
}

bool IsSettled(const TreeListing& before, const TreeListing& after) { return before == after; }

}  // namespace kc::initwarm
