// Small string helpers shared by every library. Pure.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kc {

// "a, b, c" for StrJoin({"a", "b", "c"}, ", ").
std::string StrJoin(const std::vector<std::string>& parts, std::string_view sep);

// The parts one after another, in one allocation: StrCat({a, "=", b}).
std::string StrCat(std::initializer_list<std::string_view> parts);

}  // namespace kc
