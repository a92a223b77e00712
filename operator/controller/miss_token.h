// What a miss report's bearer token claims, read before any API call.
//
// A pod's projected ServiceAccount token is a JWT whose payload names its
// audiences, its expiry and the pod it is bound to. The payload is read
// here without checking the signature (the TokenReview does that), only to
// refuse at once, with no API call, what could never pass the review:
// something that is not a JWT, one for another audience, one that expired,
// or one not bound to a pod. An attacker can forge these claims, so they
// are a filter, never an identity: the identity is the TokenReview's.
// Pure.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "operator/decide/types.h"

namespace kc::op {

// Larger tokens are refused unread (a projected token is about 1 KiB).
inline constexpr std::size_t kMaxMissTokenBytes = 8 * 1024;

struct TokenClaims {
  std::string ns;
  std::string pod;
  std::string pod_uid;
  Time expires;
  friend bool operator==(const TokenClaims&, const TokenClaims&) = default;
};

// Unauthenticated naming what is wrong when `token` is not a JWT of at most
// kMaxMissTokenBytes with a JSON payload whose "aud" holds
// core::kMissTokenAudience, whose "exp" is after `now`, and whose
// "kubernetes.io" names a namespace and a pod (name and uid).
StatusOr<TokenClaims> ClaimsOfMissToken(const std::string& token, Time now);

}  // namespace kc::op
