#include "kube/url.h"

namespace kc::kube {

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

Query& Query::Add(std::string_view key, std::string_view value) {
  if (!value.empty()) params_.emplace_back(key, value);
  return *this;
}

Query& Query::AddAlways(std::string_view key, std::string_view value) {
  params_.emplace_back(key, value);
  return *this;
}

std::string Query::ToString() const {
  std::string out;
  for (const auto& [key, value] : params_) {
    out += out.empty() ? '?' : '&';
    out += UrlEncode(key);
    out += '=';
    out += UrlEncode(value);
  }
  return out;
}

}  // namespace kc::kube
