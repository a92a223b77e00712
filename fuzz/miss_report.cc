// Fuzz target: the miss report codec (core/miss_report.h), what a gated
// pod's `initwarm misses --json` prints. Input: the report. Properties: no
// crash, no exception; a report that decodes encodes to JSON that decodes
// to the same report.
#include "core/miss_report.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseMissReport,
                           kc::core::MissReportToJson);
  return 0;
}
