// LabelSet: a node's labels as one shared, immutable value whose strings are
// interned. A copy is a reference count (a reconcile pass reads the pool's
// nodes without copying their labels); each distinct key or value is held
// once however many nodes carry it (27 labels on 5,000 nodes are a few
// hundred strings, not 270,000); equal sets compare by pointer.
//
// - Built from a std::map (implicitly: views and tests build NodeViews from
//   maps) or an initializer list; ToMap() gives the map back.
// - Find(key) / Has(key, value) / iteration in key order ({first, second}).
// - Facts() and FingerprintLabels() are core::NodeFactsFromLabels and
//   core::FingerprintLabels of these labels, computed once per set (the
//   per-node work every pass over a pool used to repeat).
// Thread-safe: immutable; the intern table and the memos lock.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "core/fingerprint.h"

namespace kc::op {

class LabelSet {
 public:
  using Map = std::map<std::string, std::string>;

  LabelSet();
  LabelSet(const Map& labels);  // NOLINT(google-explicit-constructor): a map is a label set
  LabelSet(std::initializer_list<std::pair<const std::string, std::string>> labels);

  // The value of `key`, or nullptr.
  const std::string* Find(std::string_view key) const;
  bool Has(std::string_view key, std::string_view value) const;
  // The value of `key`; throws std::out_of_range when absent (as std::map).
  const std::string& at(std::string_view key) const;
  size_t size() const;
  bool empty() const { return size() == 0; }
  Map ToMap() const;
  // A new set: this one with key=value set / with key removed.
  LabelSet With(const std::string& key, const std::string& value) const;
  LabelSet Without(const std::string& key) const;

  // core::NodeFactsFromLabels(ToMap()), computed once.
  const StatusOr<core::NodeFacts>& Facts() const;
  // core::FingerprintLabels(ToMap()) as a LabelSet, computed once.
  const LabelSet& FingerprintLabels() const;

  struct Entry {
    const std::string& first;
    const std::string& second;
  };
  using Pairs = std::vector<std::pair<const std::string*, const std::string*>>;
  class Iterator {
   public:
    Entry operator*() const { return {*it_->first, *it_->second}; }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return it_ == o.it_; }
    bool operator!=(const Iterator& o) const { return it_ != o.it_; }

   private:
    friend class LabelSet;
    explicit Iterator(Pairs::const_iterator it) : it_(it) {}
    Pairs::const_iterator it_;
  };
  Iterator begin() const;
  Iterator end() const;

  friend bool operator==(const LabelSet& a, const LabelSet& b);
  friend bool operator!=(const LabelSet& a, const LabelSet& b) { return !(a == b); }

  // Distinct strings interned now (all label sets of the process): for
  // tests and the memory figures.
  static size_t InternedStrings();

 private:
  struct Impl;
  static const std::shared_ptr<const Impl>& EmptyImpl();
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kc::op
