// Query strings for API paths (percent-encoding: base/percent_encode.h).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::kube {

// Builds "?k=v&k2=v2" (empty when no parameters), encoding keys and values,
// in insertion order. Add() with an empty value is skipped; use AddAlways()
// for a parameter that must appear even when empty.
class Query {
 public:
  Query& Add(std::string_view key, std::string_view value);
  Query& AddAlways(std::string_view key, std::string_view value);
  std::string ToString() const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace kc::kube
