// Parity: does a gated pod run what its KernelCache warmed? The cache was
// compiled by spec.image with the environment the fingerprint keys on
// (core::RuntimeFactsFor: literal env values of spec.warmup.env with a
// cache-affecting prefix). A pod that runs another image, or sets one of
// those variables otherwise, compiles what the cache lacks on every start,
// silently. ParityGaps names each difference:
//   - image: no app container runs the warmed image (tags and digests
//     compared after the registry defaults: "python:3" is
//     "docker.io/library/python:3"; "x" is "x:latest"; two references with
//     digests compare by digest);
//   - env: in the container that runs the warmed image (else the first
//     app container), a keyed variable the warmup set to another value or
//     left unset, or one the warmup set that the container lacks. A value
//     from valueFrom or envFrom cannot be known at admission and is not
//     compared; the cache-view variables the webhook injects are skipped;
//   - command, gpus (the server form of the warmup, `server` given): the
//     serving container's command and args differ from the warmed
//     template's (a server flag is part of its cache keys), or the pod asks
//     for another nvidia.com/gpu count than the template (another parallel
//     layout compiles other kernels).
// Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/fingerprint.h"
#include "core/server_warmup.h"

namespace kc::webhook {

enum class ParityField { kImage, kEnv, kCommand, kGpus };

constexpr std::string_view ParityFieldName(ParityField f) {
  switch (f) {
    case ParityField::kImage:
      return "image";
    case ParityField::kEnv:
      return "env";
    case ParityField::kCommand:
      return "command";
    case ParityField::kGpus:
      return "gpus";
  }
  return "image";
}

struct ParityGap {
  ParityField field = ParityField::kImage;
  std::string detail;  // "container server runs python:3.12, the cache was warmed by python:3.11"
  friend bool operator==(const ParityGap&, const ParityGap&) = default;
};

// The image reference with the registry's defaults filled in.
std::string NormalizeImageRef(std::string_view ref);
bool SameImage(std::string_view a, std::string_view b);

// The differences between the pod spec `pod_spec` and what was warmed.
// `server`: the warmed template's serving container (server form), else null.
std::vector<ParityGap> ParityGaps(const nlohmann::json& pod_spec, const core::RuntimeFacts& warmed,
                                  const core::ServingContainer* server = nullptr);

// "image: ...; env: ...", at most 1 KiB (the pod annotation's value).
std::string ParityText(const std::vector<ParityGap>& gaps);

}  // namespace kc::webhook
