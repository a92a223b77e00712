// Standard base64 (RFC 4648 section 4): kubeconfig *-data fields, Secret
// data, caBundle and the admission response's patch. Pure.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace kc {

// Encodes with padding, no line breaks.
std::string EncodeBase64(std::string_view in);
// Decodes (whitespace ignored, padding optional); anything else is
// InvalidArgument naming the offending character.
StatusOr<std::string> DecodeBase64(std::string_view in);

}  // namespace kc
