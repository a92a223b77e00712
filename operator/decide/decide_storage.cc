#include "operator/decide/decide_storage.h"

#include <algorithm>

#include "base/duration.h"
#include "base/strings.h"
#include "operator/decide/warmup_job.h"

namespace kc::op::decide {

StorageVerdict DecideStorage(const core::KernelCache& kc, const std::optional<PvcView>& pvc,
                             const Settings& settings, const api::Condition* prev, Time now) {
  StorageVerdict v;
  const std::string claim = core::ClaimName(kc);
  const bool existing = !kc.spec.storage.existing_claim.empty();
  auto set = [&](bool ok, const std::string& reason, const std::string& msg, bool warn) {
    if (warn && Changed(prev, ok, reason)) v.effects.Event("Warning", reason, msg);
    v.ready = {ok, reason, msg};
  };
  if (!pvc) {
    if (existing) {
      set(false, "ClaimNotFound",
          "claim " + claim + " (spec.storage.existingClaim) not found in namespace " +
              kc.metadata.namespace_ +
              "; create a ReadWriteMany claim of that name or use spec.storage.size",
          true);
      return v;
    }
    Action a;
    a.kind = Action::Kind::kCreatePvc;
    a.name = claim;
    a.object = BuildPvc(kc);
    v.effects.actions.push_back(std::move(a));
    v.effects.Event("Normal", "ClaimCreated",
                    "created ReadWriteMany claim " + claim + " of " + kc.spec.storage.size);
    set(false, "Binding", "created claim " + claim + "; waiting for it to bind", false);
    v.effects.WakeAt(now + settings.pvc_binding_grace, now);
    v.usable = true;
    return v;
  }
  if (pvc->deleting) {
    set(false, "ClaimTerminating", "claim " + claim + " is being deleted", true);
    return v;
  }
  const bool rwx = std::find(pvc->access_modes.begin(), pvc->access_modes.end(), "ReadWriteMany") !=
                   pvc->access_modes.end();
  if (!rwx) {
    set(false, "NotReadWriteMany",
        "claim " + claim + " has access modes [" + StrJoin(pvc->access_modes, ", ") +
            "]; warmup Jobs and model pods on many nodes share it, so it must be "
            "ReadWriteMany (use a class such as NFS, CephFS, EFS, Filestore)",
        true);
    return v;
  }
  v.usable = true;
  if (pvc->phase == "Bound") {
    set(true, "Bound", "claim " + claim + " is bound", false);
  } else if (pvc->phase == "Pending" || pvc->phase.empty()) {
    const Time deadline = pvc->created + settings.pvc_binding_grace;
    if (now < deadline) {
      set(false, "Binding", "waiting for claim " + claim + " to bind", false);
      v.effects.WakeAt(deadline, now);
    } else {
      set(false, "WaitingForBinding",
          "claim " + claim + " is still Pending after " +
              FormatDuration(settings.pvc_binding_grace) +
              "; check its storage class and provisioner (kubectl describe pvc " + claim +
              "). A WaitForFirstConsumer class binds when the first warmup pod is scheduled",
          true);
    }
  } else {
    set(false, "Claim" + pvc->phase, "claim " + claim + " is " + pvc->phase, true);
    v.usable = false;
  }
  return v;
}

}  // namespace kc::op::decide
