#include "operator/webhook/validate_kc.h"

#include <algorithm>
#include <set>

namespace kc::webhook {
namespace {

// Everything both selectors require of one key.
struct KeyRule {
  bool must_exist = false;
  bool must_not_exist = false;
  std::optional<std::set<std::string>> allowed;  // nullopt: any value
  std::set<std::string> excluded;
  void Allow(const std::set<std::string>& values) {
    if (!allowed) {
      allowed = values;
      return;
    }
    std::set<std::string> both;
    std::set_intersection(allowed->begin(), allowed->end(), values.begin(), values.end(),
                          std::inserter(both, both.begin()));
    allowed = std::move(both);
  }
};

bool KnownOperators(const api::LabelSelector& s) {
  return std::all_of(s.match_expressions.begin(), s.match_expressions.end(), [](const auto& r) {
    return r.op == "In" || r.op == "NotIn" || r.op == "Exists" || r.op == "DoesNotExist";
  });
}

void Pool(const api::LabelSelector& s, std::map<std::string, KeyRule>* rules) {
  for (const auto& [k, v] : s.match_labels) {
    KeyRule& r = (*rules)[k];
    r.must_exist = true;
    r.Allow({v});
  }
  for (const auto& req : s.match_expressions) {
    KeyRule& r = (*rules)[req.key];
    const std::set<std::string> values(req.values.begin(), req.values.end());
    if (req.op == "In") {
      r.must_exist = true;
      r.Allow(values);
    } else if (req.op == "NotIn") {
      r.excluded.insert(values.begin(), values.end());
    } else if (req.op == "Exists") {
      r.must_exist = true;
    } else {  // DoesNotExist
      r.must_not_exist = true;
    }
  }
}

std::string Describe(const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return "{} (any pod)";
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ", ";
    out += k + ": \"" + v + "\"";
  }
  return out + "}";
}

}  // namespace

std::optional<std::map<std::string, std::string>> SelectorOverlap(const api::LabelSelector& a,
                                                                  const api::LabelSelector& b) {
  if (a.empty() || b.empty() || !KnownOperators(a) || !KnownOperators(b)) return std::nullopt;
  std::map<std::string, KeyRule> rules;
  Pool(a, &rules);
  Pool(b, &rules);
  std::map<std::string, std::string> witness;
  for (const auto& [key, rule] : rules) {
    const KeyRule& r = rule;  // a lambda below captures it (clang 14: not a binding)
    if (r.must_exist && r.must_not_exist) return std::nullopt;
    if (r.must_not_exist) continue;  // the label is absent
    if (r.allowed) {
      auto it = std::find_if(r.allowed->begin(), r.allowed->end(),
                             [&](const std::string& v) { return r.excluded.count(v) == 0; });
      if (it == r.allowed->end()) return std::nullopt;
      witness[key] = *it;
    } else if (r.must_exist) {
      std::string v = "x";
      while (r.excluded.count(v) > 0) v += "x";
      witness[key] = v;
    }
    // Only NotIn: the label is absent.
  }
  // The witness satisfies both by construction; checked all the same.
  if (!api::SelectorMatches(a, witness) || !api::SelectorMatches(b, witness)) {
    return std::nullopt;
  }
  return witness;
}

std::optional<std::string> StorageClassWarning(const std::string& name,
                                               const StorageClassFacts& facts) {
  if (facts.class_exists != Known::kNo || facts.volume_names_it != Known::kNo) return std::nullopt;
  return "spec.storage.storageClassName: StorageClass \"" + name +
         "\" does not exist and no PersistentVolume names it; the cache claim stays Pending "
         "until one does (create it, or fix the name)";
}

KernelCacheVerdict ValidateKernelCache(const core::KernelCache& kc,
                                       const std::vector<core::KernelCache>& in_namespace,
                                       const StorageClassLookup& storage_class) {
  KernelCacheVerdict v;
  std::vector<const core::KernelCache*> others;
  for (const auto& o : in_namespace) {
    if (o.metadata.name == kc.metadata.name) continue;  // itself (an update)
    if (o.metadata.deletion_timestamp) continue;
    if (!o.metadata.namespace_.empty() && !kc.metadata.namespace_.empty() &&
        o.metadata.namespace_ != kc.metadata.namespace_) {
      continue;
    }
    others.push_back(&o);
  }
  std::sort(others.begin(), others.end(),
            [](const auto* x, const auto* y) { return x->metadata.name < y->metadata.name; });

  for (const auto* o : others) {
    if (auto witness = SelectorOverlap(kc.spec.pod_selector, o->spec.pod_selector)) {
      v.denials.push_back("spec.podSelector overlaps KernelCache \"" + o->metadata.name +
                          "\"'s: a pod labelled " + Describe(*witness) +
                          " would be selected by both and get no cache gate. Make the "
                          "selectors disjoint, e.g. give both a label key with different "
                          "values in matchLabels.");
    }
  }
  const std::string claim = core::ClaimName(kc);
  for (const auto* o : others) {
    if (core::ClaimName(*o) != claim) continue;
    const bool both_share =
        !kc.spec.storage.existing_claim.empty() && !o->spec.storage.existing_claim.empty() &&
        kc.spec.storage.share_existing_claim && o->spec.storage.share_existing_claim;
    if (both_share) continue;
    const std::string field =
        kc.spec.storage.existing_claim.empty() ? "spec.storage.size" : "spec.storage.existingClaim";
    std::string fix;
    if (kc.spec.storage.existing_claim.empty() || o->spec.storage.existing_claim.empty()) {
      fix =
          "The operator owns (and deletes) the claim it creates for a KernelCache; give this "
          "KernelCache another claim.";
    } else {
      fix =
          "To share it on purpose, set spec.storage.shareExistingClaim: true on both "
          "KernelCaches; otherwise use another claim.";
    }
    v.denials.push_back(field + ": claim \"" + claim + "\" is already used by KernelCache \"" +
                        o->metadata.name + "\". " + fix);
  }
  const std::string& sc = kc.spec.storage.storage_class_name;
  if (!sc.empty() && storage_class) {
    if (auto warning = StorageClassWarning(sc, storage_class(sc))) {
      v.warnings.push_back(std::move(*warning));
    }
  }
  v.allowed = v.denials.empty();
  return v;
}

}  // namespace kc::webhook
