#include "kube/url.h"

#include "base/percent_encode.h"

namespace kc::kube {

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
    out += PercentEncode(key);
    out += '=';
    out += PercentEncode(value);
  }
  return out;
}

}  // namespace kc::kube
