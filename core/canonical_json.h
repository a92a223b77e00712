// The compatibility rule of the fingerprint's canonical JSON.
//
// Every fingerprint id in every cluster is the sha256 of CanonicalJson's
// bytes (core/fingerprint.h): changing those bytes for facts that did not
// change would re-warm every cache of every cluster at once, a GPU Job per
// fingerprint, on the operator's upgrade. So:
//  - the inputs of the first release are always written, as they are now;
//  - an input added later has a default equal to the behaviour before it
//    existed, and is written only when its value differs from that default
//    (PutUnlessDefault). Nodes and runtimes that do not use it keep their
//    ids; only those that do get new ones.
// fingerprint_compat_test.cc pins the ids of a set of node and runtime
// facts; a change that moves any of them fails there.
// Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kc::core {

// object[key] = value, unless value == default_value (then nothing).
template <typename T>
void PutUnlessDefault(nlohmann::json& object, std::string_view key, const T& value,
                      const T& default_value) {
  if (value == default_value) return;
  object[std::string(key)] = value;
}

}  // namespace kc::core
