// URL helpers for API paths: percent-encoding and query strings.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::kube {

// Percent-encodes every byte outside RFC 3986 "unreserved" (A-Z a-z 0-9 - . _ ~).
std::string UrlEncode(std::string_view s);

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
