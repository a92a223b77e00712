// Fuzz target: the resolve answer codec (core/resolve_answer.h), the body
// initwarm's gate reads from the operator's /v1/resolve, and the resolve
// URL parser (the operator's and the gate's --resolve-url). Input: the body,
// also read as a URL. Properties: no crash, no exception; an answer that
// decodes encodes to JSON that decodes to the same answer; a URL that
// parses has a host and a port of 1..5 digits, and its prefix never ends in
// "/" (the request path would hold "//").
#include "core/resolve_answer.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kc::fuzz::CheckRoundTrip(kc::fuzz::AsText(data, size), kc::core::ParseResolveAnswer,
                           kc::core::ResolveAnswerToJson);
  const std::string_view text = kc::fuzz::AsText(data, size);
  if (auto u = kc::core::ParseResolveUrl(text); u.ok()) {
    kc::fuzz::Check(!u->host.empty() && !u->port.empty() && u->port.size() <= 5);
    kc::fuzz::Check(u->prefix.empty() || (u->prefix.back() != '/' &&
                                          !std::string_view(u->prefix).ends_with("/v1/resolve")));
  }
  return 0;
}
