// SelectorIndex: every KernelCache's spec.nodeSelector by its key, kept by
// the KernelCache informer's handlers, so a node event asks which
// KernelCaches it concerns without copying or parsing any of them.
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kc::op {

class SelectorIndex {
 public:
  using Selector = std::map<std::string, std::string>;

  void Set(const std::string& key, Selector selector);
  void Erase(const std::string& key);
  // The keys whose selector `concerns` holds for, in key order.
  std::vector<std::string> KeysWhere(const std::function<bool(const Selector&)>& concerns) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Selector> selectors_;
};

}  // namespace kc::op
