// Decide's storage step: the claim to create or adopt and condition
// StorageReady.
//
//   no claim, spec.storage.size      -> create it (Event ClaimCreated), Binding
//   no claim, spec.storage.existingClaim -> ClaimNotFound, not usable
//   claim being deleted              -> ClaimTerminating, not usable
//   claim not ReadWriteMany          -> NotReadWriteMany, not usable
//   Bound                            -> StorageReady=True Bound
//   Pending (or no phase)            -> Binding until Settings::pvc_binding_grace
//                                       after its creation, then WaitingForBinding
//   any other phase (Lost)           -> Claim<phase>, not usable
// Warning Events go with the failing reasons, once (when the previous
// StorageReady did not already say so).
// Pure.
#pragma once

#include <optional>

#include "operator/decide/decide_step.h"

namespace kc::op::decide {

struct StorageVerdict {
  // Warmups and GC may use the claim (a Binding or WaitingForBinding claim
  // is: a WaitForFirstConsumer class binds when the first warmup pod lands).
  bool usable = false;
  ConditionVerdict ready;  // StorageReady
  Effects effects;         // kCreatePvc, Events, the binding-grace timer
};

StorageVerdict DecideStorage(const core::KernelCache& kc, const std::optional<PvcView>& pvc,
                             const Settings& settings, const api::Condition* prev_storage_ready,
                             Time now);

}  // namespace kc::op::decide
