// Typed view of a core/v1 Pod: placement, phase and container results
// (a terminated container's exit code, reason and termination message).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/meta.h"

namespace kc::api {

struct ContainerStateTerminated {
  int exit_code = 0;
  std::string reason;   // "Completed", "Error", "OOMKilled"
  std::string message;  // the termination message
  // "containerID" ("containerd://<id>"): each run of a container has its
  // own; a run's state keeps it when it moves to lastState.
  std::string container_id;
  std::optional<Time> started_at;
  std::optional<Time> finished_at;

  friend bool operator==(const ContainerStateTerminated&,
                         const ContainerStateTerminated&) = default;
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  int restart_count = 0;
  bool running = false;
  std::optional<std::string> waiting_reason;  // "ImagePullBackOff", ...
  // state.terminated; absent when missing, not an object, or empty.
  std::optional<ContainerStateTerminated> terminated;
  std::optional<ContainerStateTerminated> last_terminated;  // lastState.terminated
  std::string image;
  std::string image_id;
};

struct Pod {
  ObjectMeta metadata;
  std::string node_name;  // spec.nodeName; "" until scheduled
  std::string phase;      // Pending, Running, Succeeded, Failed, Unknown
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::vector<Condition> conditions;

  // The status of container `name` among init and regular containers.
  const ContainerStatus* FindContainerStatus(std::string_view name) const;
};

void from_json(const Json& j, ContainerStatus& s);  // NOLINT(readability-identifier-naming)
void from_json(const Json& j, Pod& p);              // NOLINT(readability-identifier-naming)

}  // namespace kc::api
