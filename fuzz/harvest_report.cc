// Fuzz target: the harvest result codec (core/harvest_report.h), the
// termination message the operator reads from a harvest pod. Input: the
// message. Properties: no crash, no exception; a report that decodes
// encodes to JSON that decodes to the same report.
#include "core/harvest_report.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseHarvestReport,
                           kc::core::HarvestReportToJson);
  return 0;
}
