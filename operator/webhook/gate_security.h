// The security context of the injected kernelcache-wait init container,
// one rule in one place (a core rule shared with the warmup Job may replace
// it later):
//   - runAsUser / runAsGroup: those of the pod's first app container, else
//     the pod's (so the gate writes the view as the user who reads it);
//     unset when neither sets them (the image's user, 65532, applies);
//   - runAsNonRoot: true unless the user is known to be root (uid 0);
//   - allowPrivilegeEscalation: false; capabilities: drop ALL;
//     readOnlyRootFilesystem: true (the gate writes only to the emptyDir and
//     the cache volume); seccompProfile: RuntimeDefault.
// Pure, total: a malformed pod gives the defaults.
#pragma once

#include <nlohmann/json.hpp>

namespace kc::webhook {

nlohmann::json GateSecurityContext(const nlohmann::json& pod);

}  // namespace kc::webhook
