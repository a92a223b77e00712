#include "operator/controller/token_review_cache.h"

#include <algorithm>

#include "core/fingerprint.h"

namespace kc::op {

std::optional<TokenIdentity> TokenReviewCache::Lookup(const std::string& token, Time now) const {
  const std::string key = core::Sha256Hex(token);
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.expires <= now) return std::nullopt;
  return it->second.id;
}

void TokenReviewCache::Store(const std::string& token, const TokenIdentity& id, Time expires,
                             Time now) {
  if (expires <= now || capacity_ == 0) return;
  const std::string key = core::Sha256Hex(token);
  std::lock_guard lock(mu_);
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    std::erase_if(entries_, [now](const auto& kv) { return kv.second.expires <= now; });
  }
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    auto first = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; });
    entries_.erase(first);
  }
  entries_[key] = {id, expires};
}

std::size_t TokenReviewCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace kc::op
