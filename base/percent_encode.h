// Percent-encoding for URL query values and paths: the one encoder of both
// programs (the operator's Kubernetes client, kube/url.h; initwarm's
// resolve client). Pure.
#pragma once

#include <string>
#include <string_view>

namespace kc {

// Every byte outside RFC 3986 "unreserved" (A-Z a-z 0-9 - . _ ~) becomes
// %XX (upper-case hex): "a in (x)" -> "a%20in%20%28x%29".
std::string PercentEncode(std::string_view s);

}  // namespace kc
