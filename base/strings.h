// Small string helpers shared by every library. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kc {

// "a, b, c" for StrJoin({"a", "b", "c"}, ", ").
std::string StrJoin(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace kc
