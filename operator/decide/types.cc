#include "operator/decide/types.h"

namespace kc::op {

const char* WarmupOutcomeName(WarmupOutcome outcome) {
  switch (outcome) {
    case WarmupOutcome::kPublished:
      return "Published";
    case WarmupOutcome::kFailed:
      return "Failed";
    case WarmupOutcome::kMismatch:
      return "Mismatch";
  }
  return "Failed";
}

const char* ActionKindName(Action::Kind kind) {
  switch (kind) {
    case Action::Kind::kAddFinalizer:
      return "AddFinalizer";
    case Action::Kind::kRemoveFinalizer:
      return "RemoveFinalizer";
    case Action::Kind::kCreatePvc:
      return "CreatePvc";
    case Action::Kind::kCreateJob:
      return "CreateJob";
    case Action::Kind::kDeleteJob:
      return "DeleteJob";
    case Action::Kind::kCancelJob:
      return "CancelJob";
    case Action::Kind::kDeletePvc:
      return "DeletePvc";
    case Action::Kind::kEmitEvent:
      return "EmitEvent";
  }
  return "Unknown";
}

}  // namespace kc::op
