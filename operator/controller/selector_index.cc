#include "operator/controller/selector_index.h"

#include <utility>

namespace kc::op {

void SelectorIndex::Set(const std::string& key, Selector selector) {
  std::lock_guard<std::mutex> l(mu_);
  selectors_[key] = std::move(selector);
}

void SelectorIndex::Erase(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  selectors_.erase(key);
}

std::vector<std::string> SelectorIndex::KeysWhere(
    const std::function<bool(const Selector&)>& concerns) const {
  std::vector<std::string> keys;
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [key, selector] : selectors_) {
    if (concerns(selector)) keys.push_back(key);
  }
  return keys;
}

size_t SelectorIndex::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return selectors_.size();
}

}  // namespace kc::op
