// Whose identity a server-form warmup pod runs under.
//
// The server form runs the template's pod under the operator's Job and
// keeps the template's serviceAccountName (the server's own identity). In
// the operator's own namespace that name may be the operator's
// ServiceAccount, which can create Jobs and read pods everywhere it
// watches: whoever may write a KernelCache there would run code as the
// operator. So a server-form KernelCache in the operator's namespace is
// refused, and so is a template that names the operator's ServiceAccount.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/api_types.h"
#include "operator/decide/types.h"

namespace kc::op::decide {

// The spec error naming the field and the fix; nullopt when the spec is
// not the server form or runs under another identity.
// `settings.operator_namespace` / `.operator_service_account`: empty when
// not known (nothing is refused on their account).
std::optional<std::string> ServerIdentityProblem(const core::KernelCacheSpec& spec,
                                                 std::string_view kc_namespace,
                                                 const Settings& settings);

}  // namespace kc::op::decide
