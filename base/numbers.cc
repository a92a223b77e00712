#include "base/numbers.h"

#include <charconv>
#include <string>

namespace kc {

StatusOr<int64_t> ParseInt64(std::string_view text, std::string_view what, int64_t min,
                             int64_t max) {
  // Quote at most 64 bytes of a hostile value in the message.
  const std::string shown(text.substr(0, 64));
  const std::string where(what);
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  const bool digits_only = !text.empty() &&
                           text.find_first_not_of("-0123456789") == std::string_view::npos &&
                           text.find('-', 1) == std::string_view::npos && text != "-";
  if (!digits_only) {
    return InvalidArgumentError(where + ": \"" + shown + (text.size() > 64 ? "..." : "") +
                                "\" is not an integer");
  }
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) {
    return InvalidArgumentError(where + ": " + shown + (text.size() > 64 ? "..." : "") +
                                " is out of range " + range);
  }
  if (ec != std::errc() || p != end) {
    return InvalidArgumentError(where + ": \"" + shown + "\" is not an integer");
  }
  if (v < min || v > max) {
    return InvalidArgumentError(where + ": " + std::to_string(v) + " is out of range " + range);
  }
  return v;
}

}  // namespace kc
