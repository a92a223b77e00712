// Fuzz target: the gate report codec (core/gate_report.h), the termination
// message of a model pod's kernelcache-wait container. Input: the message.
// Properties: no crash, no exception; a report that decodes encodes to at
// most kMaxReportBytes of JSON that decodes; encoding cuts long strings and
// extra quarantine entries, so the round trip is exact when nothing needed
// cutting, and encoding what came back is a fixed point.
#include "core/gate_report.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

namespace {

// Every string short enough that the encoder keeps it whole.
bool Small(const kc::core::GateReport& r) {
  auto ok = [](const std::string& s) { return s.size() <= 16; };
  if (r.quarantined.size() > 4) return false;
  for (const auto& q : r.quarantined) {
    if (!ok(q.fingerprint) || !ok(q.expected_digest) || !ok(q.found_digest) || !ok(q.level) ||
        !ok(q.file) || !ok(q.reason) || !ok(q.moved_to)) {
      return false;
    }
  }
  return ok(r.reason) && ok(r.fingerprint) && ok(r.manifest_digest) && ok(r.message) &&
         ok(r.view) && ok(r.target);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  auto r = kc::core::ParseGateReport(kc::fuzz::AsText(data, size));
  if (!r.ok()) return 0;
  const std::string json = kc::core::GateReportToJson(*r);
  Check(json.size() <= kc::core::kMaxReportBytes);
  auto back = kc::core::ParseGateReport(json);
  Check(back.ok());
  if (Small(*r)) Check(*back == *r);
  auto again = kc::core::ParseGateReport(kc::core::GateReportToJson(*back));
  Check(again.ok() && *again == *back);
  return 0;
}
