#include "core/json_bounds.h"

#include <string>

namespace kc::core {

Status CheckJsonBounds(std::string_view text, const JsonBounds& bounds, std::string_view what) {
  auto refuse = [&](const std::string& why) {
    return InvalidArgumentError(std::string(what) + ": " + why);
  };
  if (text.size() > bounds.max_bytes) {
    return refuse("has " + std::to_string(text.size()) + " bytes, more than " +
                  std::to_string(bounds.max_bytes));
  }
  int depth = 0;
  std::size_t values = 0;
  bool in_string = false;
  bool escaped = false;
  bool in_scalar = false;  // inside a number or literal
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    const bool scalar_char = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                             (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
    if (scalar_char) {
      if (!in_scalar) ++values;
      in_scalar = true;
    } else {
      in_scalar = false;
      if (c == '"') {
        in_string = true;
        ++values;
      } else if (c == '{' || c == '[') {
        ++values;
        if (++depth > bounds.max_depth) {
          return refuse("nests deeper than " + std::to_string(bounds.max_depth) + " levels");
        }
      } else if (c == '}' || c == ']') {
        --depth;
      }
    }
    if (values > bounds.max_values) {
      return refuse("holds more than " + std::to_string(bounds.max_values) + " values");
    }
  }
  return OkStatus();
}

}  // namespace kc::core
