// TokenReviewCache: the identities TokenReviews authenticated, by the
// sha256 of the token, until the token expires.
//
// A miss watcher sends the same projected token on every report until the
// kubelet rotates it, so one TokenReview per token (not per report) is
// enough: Lookup() answers a stored identity while `now` is before the
// token's expiry. Only successful reviews are stored. The token itself is
// never kept, only its hash. Bounded: at most `capacity` entries; storing
// into a full cache drops the expired ones, then the one that expires
// first. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "operator/controller/miss_token.h"

namespace kc::op {

struct TokenIdentity {
  std::string ns;
  std::string pod;
  std::string pod_uid;
  friend bool operator==(const TokenIdentity&, const TokenIdentity&) = default;
};

class TokenReviewCache {
 public:
  explicit TokenReviewCache(std::size_t capacity = 8192) : capacity_(capacity) {}

  std::optional<TokenIdentity> Lookup(const std::string& token, Time now) const;
  void Store(const std::string& token, const TokenIdentity& id, Time expires, Time now);
  std::size_t size() const;

 private:
  struct Entry {
    TokenIdentity id;
    Time expires;
  };
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // sha256 hex of the token -> entry
};

}  // namespace kc::op
