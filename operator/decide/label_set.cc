#include "operator/decide/label_set.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace kc::op {
namespace {

// Every distinct label string of the process, with the number of label sets
// holding it; a string no set holds is dropped (node names and driver
// versions come and go with the fleet). Elements of an unordered_map keep
// their address across rehashing: the pointers label sets hold stay valid.
class InternTable {
 public:
  const std::string* Acquire(const std::string& s) {
    std::lock_guard<std::mutex> l(mu_);
    auto [it, inserted] = table_.try_emplace(s, 0);
    ++it->second;
    return &it->first;
  }
  void Release(const std::string* s) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = table_.find(*s);
    if (it != table_.end() && --it->second == 0) table_.erase(it);
  }
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return table_.size();
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, size_t> table_;
};

InternTable& Table() {
  static auto* table = new InternTable();  // never destroyed: sets may outlive statics
  return *table;
}

}  // namespace

struct LabelSet::Impl {
  Pairs pairs;  // sorted by key; interned
  mutable std::once_flag facts_once;
  mutable std::unique_ptr<StatusOr<core::NodeFacts>> facts;
  mutable std::once_flag fingerprint_once;
  mutable std::unique_ptr<LabelSet> fingerprint_labels;

  explicit Impl(const Map& labels) {
    pairs.reserve(labels.size());
    for (const auto& [k, v] : labels) pairs.emplace_back(Table().Acquire(k), Table().Acquire(v));
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    for (const auto& [k, v] : pairs) {
      Table().Release(k);
      Table().Release(v);
    }
  }
};

const std::shared_ptr<const LabelSet::Impl>& LabelSet::EmptyImpl() {
  static const auto* empty = new std::shared_ptr<const Impl>(std::make_shared<const Impl>(Map{}));
  return *empty;
}

LabelSet::LabelSet() : impl_(EmptyImpl()) {}

LabelSet::LabelSet(const Map& labels)
    : impl_(labels.empty() ? EmptyImpl() : std::make_shared<const Impl>(labels)) {}

LabelSet::LabelSet(std::initializer_list<std::pair<const std::string, std::string>> labels)
    : LabelSet(Map(labels)) {}

const std::string* LabelSet::Find(std::string_view key) const {
  const Pairs& p = impl_->pairs;
  auto it = std::lower_bound(p.begin(), p.end(), key,
                             [](const auto& e, std::string_view k) { return *e.first < k; });
  if (it == p.end() || *it->first != key) return nullptr;
  return it->second;
}

bool LabelSet::Has(std::string_view key, std::string_view value) const {
  const std::string* v = Find(key);
  return v != nullptr && *v == value;
}

const std::string& LabelSet::at(std::string_view key) const {
  const std::string* v = Find(key);
  if (v == nullptr) throw std::out_of_range("no label " + std::string(key));
  return *v;
}

size_t LabelSet::size() const { return impl_->pairs.size(); }

LabelSet::Map LabelSet::ToMap() const {
  Map out;
  for (const auto& [k, v] : impl_->pairs) out.emplace_hint(out.end(), *k, *v);
  return out;
}

LabelSet LabelSet::With(const std::string& key, const std::string& value) const {
  Map m = ToMap();
  m[key] = value;
  return LabelSet(m);
}

LabelSet LabelSet::Without(const std::string& key) const {
  Map m = ToMap();
  m.erase(key);
  return LabelSet(m);
}

const StatusOr<core::NodeFacts>& LabelSet::Facts() const {
  std::call_once(impl_->facts_once, [this] {
    impl_->facts = std::make_unique<StatusOr<core::NodeFacts>>(core::NodeFactsFromLabels(ToMap()));
  });
  return *impl_->facts;
}

const LabelSet& LabelSet::FingerprintLabels() const {
  std::call_once(impl_->fingerprint_once, [this] {
    impl_->fingerprint_labels = std::make_unique<LabelSet>(core::FingerprintLabels(ToMap()));
  });
  return *impl_->fingerprint_labels;
}

LabelSet::Iterator LabelSet::begin() const { return Iterator(impl_->pairs.begin()); }
LabelSet::Iterator LabelSet::end() const { return Iterator(impl_->pairs.end()); }

bool operator==(const LabelSet& a, const LabelSet& b) {
  // Interned: equal strings are the same pointer.
  return a.impl_ == b.impl_ || a.impl_->pairs == b.impl_->pairs;
}

size_t LabelSet::InternedStrings() { return Table().size(); }

}  // namespace kc::op
