#include "base/utf8.h"

namespace kc {

std::string TruncateUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  constexpr std::string_view kEllipsis = "...";
  size_t n = max_bytes > kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  // s[n] is the first byte left out: when it continues a character
  // (10xxxxxx), leave out that character's earlier bytes too.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  std::string out(s.substr(0, n));
  out += kEllipsis;
  return out;
}

}  // namespace kc
