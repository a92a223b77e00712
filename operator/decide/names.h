// Names: deterministic names for everything the operator creates.
//
// A retry, a restarted operator or a second replica computes the same name
// and hits AlreadyExists instead of creating a second object. Job names are
// DNS labels of at most 63 characters (the Job controller copies them into
// the pods' job-name label); a KernelCache name too long to fit is cut and
// followed by 8 hex digits of its sha256, so two long names never collide.
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api_types.h"

namespace kc::op {

inline constexpr size_t kMaxJobName = 63;

// "<kc>-warm-<fp id>", or "<kc>-warm-<fp id>-g<N>" for the N-th purge
// re-warm (N > 0).
std::string WarmupJobName(std::string_view kc_name, std::string_view fp_id,
                          int32_t warm_generation = 0);

// "<kc>-gc-<10 hex digits of sha256 over the sorted collected ids>".
std::string GcJobName(std::string_view kc_name, std::vector<std::string> collected_ids);

// "<kc>-harvest-<fp id>-<8 hex digits of sha256 over the base digest and
// the accept list>": one Job per merge of one set of files into one
// generation.
std::string HarvestJobName(std::string_view kc_name, std::string_view fp_id,
                           std::string_view base_digest, std::string_view accept_json);

// The claim the operator creates: "<kc>-cache" (core::ClaimName picks
// existingClaim instead when set).
std::string PvcName(std::string_view kc_name);

}  // namespace kc::op
