// The section validators ValidateSpec (spec_validation.h) composes: one per
// part of a KernelCache spec, each pure, each returning the errors and
// warnings of its section alone, in the order ValidateSpec reports them.
// Messages name the full field path ("spec.storage.size: ...").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "core/spec_validation.h"

namespace kc::core {

// spec.podSelector: non-empty, valid label keys and values, valid operators.
SpecReport CheckPodSelector(const api::LabelSelector& selector);

// spec.nodeSelector (non-empty, valid labels) and spec.tolerations.
SpecReport CheckNodes(const std::map<std::string, std::string>& node_selector,
                      const std::vector<Json>& tolerations);

// spec.image: required, no whitespace; not pinned by digest is a warning
// (also in image_not_pinned).
SpecReport CheckImage(const std::string& image);

// spec.runtime: lower-case framework names with non-empty versions.
SpecReport CheckRuntime(const std::map<std::string, std::string>& runtime);

// spec.warmup: command, env, shapes, resources, deadline, backoff and
// podAnnotations.
SpecReport CheckWarmup(const WarmupSpec& warmup);

// spec.storage: exactly one of size and existingClaim, each well-formed.
SpecReport CheckStorage(const StorageSpec& storage);

// spec.consume: mode, onTimeout and verify names, waitTimeoutSeconds.
SpecReport CheckConsume(const ConsumeSpec& consume);

// spec.securityContext: fsGroup and runAsUser within the non-root ids.
SpecReport CheckSecurityContext(const SecuritySpec& security_context);

// spec.retention: durations, maxBytes, and a purgeSchedule of at least 1h.
SpecReport CheckRetention(const RetentionSpec& retention);

// spec.harvest: an interval of at least kMinHarvestInterval, caps of 1 or
// more within the hard ceilings of core/harvest.h (the mode is typed).
SpecReport CheckHarvest(const HarvestSpec& harvest);

// spec.harvest's caps as numbers; the defaults where a field does not
// parse (CheckHarvest reports it).
HarvestCaps HarvestCapsOf(const HarvestSpec& harvest);

}  // namespace kc::core
