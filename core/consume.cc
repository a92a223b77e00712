#include "core/consume.h"

#include <array>

#include "core/enum_name.h"

namespace kc::core {

StatusOr<ConsumeMode> ParseConsumeMode(std::string_view name) {
  static constexpr std::array kAll = {ConsumeMode::kCopy, ConsumeMode::kShared,
                                      ConsumeMode::kSharedReadWrite};
  return ParseEnumName<ConsumeMode>(name, kAll, ConsumeModeName);
}

StatusOr<OnTimeout> ParseOnTimeout(std::string_view name) {
  static constexpr std::array kAll = {OnTimeout::kFail, OnTimeout::kStartCold};
  return ParseEnumName<OnTimeout>(name, kAll, OnTimeoutName);
}

}  // namespace kc::core
