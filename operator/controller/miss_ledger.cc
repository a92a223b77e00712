#include "operator/controller/miss_ledger.h"

#include <algorithm>

namespace kc::op {
namespace {

void AddOnce(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

template <class Pred>
void MissLedger::EraseCaches(Pred drop) {
  for (auto it = caches_.begin(); it != caches_.end();) {
    if (!drop(it->first)) {
      ++it;
      continue;
    }
    total_entries_ -= it->second.entries.size();
    total_pods_ -= it->second.pods.size();
    for (const auto& [uid, keys] : it->second.pods) pod_home_.erase(uid);
    it = caches_.erase(it);
  }
}

void MissLedger::RemovePod(const std::string& uid) {
  auto home = pod_home_.find(uid);
  if (home == pod_home_.end()) return;
  auto c = caches_.find(home->second);
  pod_home_.erase(home);
  if (c == caches_.end()) return;
  Cache& cache = c->second;
  if (auto p = cache.pods.find(uid); p != cache.pods.end()) {
    for (const EntryKey& key : p->second) {
      auto e = cache.entries.find(key);
      if (e == cache.entries.end()) continue;
      e->second.pods.erase(uid);
      if (e->second.pods.empty()) {
        cache.entries.erase(e);
        --total_entries_;
      }
    }
    cache.pods.erase(p);
    --total_pods_;
  }
  cache.harvest.erase(uid);
  if (cache.pods.empty() && cache.entries.empty()) caches_.erase(c);
}

MissRecord MissLedger::Record(const MissSource& src, const std::vector<core::RuntimeMiss>& misses,
                              Time now, const std::optional<core::HarvestListRef>& harvest) {
  std::lock_guard lock(mu_);
  MissRecord out;
  const CacheKey key{src.ns, src.kernelcache, src.fingerprint, src.manifest_digest};
  if (auto home = pod_home_.find(src.pod_uid); home != pod_home_.end() && home->second != key) {
    RemovePod(src.pod_uid);
  }
  auto cache = caches_.find(key);
  if (cache == caches_.end()) {
    if (caches_.size() >= limits_.max_caches) {
      out.dropped = misses.size();
      return out;
    }
    cache = caches_.emplace(key, Cache{}).first;
  }
  Cache& c = cache->second;
  auto pod = c.pods.find(src.pod_uid);
  if (pod == c.pods.end()) {
    if (c.pods.size() >= limits_.max_pods || total_pods_ >= limits_.max_total_pods) {
      out.dropped = misses.size();
      if (c.pods.empty() && c.entries.empty()) caches_.erase(cache);
      return out;
    }
    pod = c.pods.emplace(src.pod_uid, std::set<EntryKey>{}).first;
    pod_home_[src.pod_uid] = key;
    ++total_pods_;
  }
  auto had = c.harvest.find(src.pod_uid);
  if (!harvest || harvest->files == 0) {
    out.harvest_changed = had != c.harvest.end();
    if (had != c.harvest.end()) c.harvest.erase(had);
  } else if (had == c.harvest.end() || had->second != *harvest) {
    out.harvest_changed = true;
    c.harvest[src.pod_uid] = *harvest;
  }
  for (const core::RuntimeMiss& m : misses) {
    const EntryKey entry{m.framework, m.key};
    auto e = c.entries.find(entry);
    if (e == c.entries.end()) {
      if (c.entries.size() >= limits_.max_entries || total_entries_ >= limits_.max_total_entries) {
        ++out.dropped;
        continue;
      }
      e = c.entries.emplace(entry, Entry{m.detail, {}}).first;
      ++total_entries_;
      ++out.new_for_cache;
    }
    ++out.accepted;
    if (!pod->second.insert(entry).second) continue;
    e->second.pods.insert(src.pod_uid);
    ++out.new_for_pod[m.framework];
    AddOnce(c.pending.details, e->second.detail);
    AddOnce(c.pending.pods, src.pod);
  }
  const bool due = !c.last_event || now - *c.last_event >= limits_.event_interval;
  if (due && !c.pending.details.empty()) {
    out.event = std::move(c.pending);
    c.pending = {};
    c.last_event = now;
  }
  return out;
}

std::optional<core::RuntimeMissStatus> MissLedger::Summary(const std::string& ns,
                                                           const std::string& kernelcache,
                                                           const std::string& fingerprint,
                                                           const std::string& digest) const {
  std::lock_guard lock(mu_);
  auto it = caches_.find({ns, kernelcache, fingerprint, digest});
  if (it == caches_.end() || it->second.entries.empty()) return std::nullopt;
  const Cache& c = it->second;
  core::RuntimeMissStatus s;
  s.count = static_cast<int64_t>(c.entries.size());
  for (const auto& [uid, keys] : c.pods) s.pods += keys.empty() ? 0 : 1;
  std::vector<const std::pair<const EntryKey, Entry>*> order;
  for (const auto& e : c.entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.pods.size() > b->second.pods.size();
  });
  for (size_t i = 0; i < order.size() && i < core::kMaxRuntimeMissTop; ++i) {
    s.top.push_back({std::string(core::MissFrameworkName(order[i]->first.first)),
                     order[i]->second.detail, static_cast<int32_t>(order[i]->second.pods.size())});
  }
  return s;
}

std::vector<core::HarvestPod> MissLedger::Harvestable(const std::string& ns,
                                                      const std::string& kernelcache,
                                                      const std::string& fingerprint,
                                                      const std::string& digest) const {
  std::lock_guard lock(mu_);
  std::vector<core::HarvestPod> out;
  auto it = caches_.find({ns, kernelcache, fingerprint, digest});
  if (it == caches_.end()) return out;
  for (const auto& [uid, list] : it->second.harvest) out.push_back({uid, list});
  return out;
}

void MissLedger::ForgetKernelCache(const std::string& ns, const std::string& kernelcache) {
  std::lock_guard lock(mu_);
  EraseCaches(
      [&](const CacheKey& k) { return std::get<0>(k) == ns && std::get<1>(k) == kernelcache; });
}

void MissLedger::ForgetOtherDigests(const std::string& ns, const std::string& kernelcache,
                                    const std::string& fingerprint,
                                    const std::string& keep_digest) {
  std::lock_guard lock(mu_);
  EraseCaches([&](const CacheKey& k) {
    const auto& [n, kc, f, d] = k;
    return n == ns && kc == kernelcache && f == fingerprint && d != keep_digest;
  });
}

}  // namespace kc::op
