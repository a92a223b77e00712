// IsolatedProcess: requests served by a forked child process, so that a
// crash while serving one (a CUDA driver reading past a corrupt image)
// fails that request, named, instead of killing this process before it can
// say why.
//
// Start() forks; the child sets PR_SET_PDEATHSIG (it dies with us), runs
// `init` (which prepares the child and returns the request handler) and
// reports init's Status back; Start returns that error, or Unavailable
// "<what> process <how it ended> while starting" when the child died
// starting. Call() sends one request and returns the handler's Status, or
// nullopt when the child died on it (`*died` says how: "killed by signal 11
// (Segmentation fault)"); the next Call starts a fresh child, and returns
// its start error, if any, as its answer.
//
// This process must not have initialised what the child uses (fork copies
// one thread and shares no driver state safely): create it before other
// threads start. Protocol over a socketpair: request u32 name length, u64
// payload length, name, payload; reply (also once after start-up) i32
// StatusCode, u32 message length, message.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

class IsolatedProcess {
 public:
  using Handler = std::function<Status(std::string_view name, std::string_view payload)>;
  using Init = std::function<StatusOr<Handler>()>;

  static StatusOr<std::unique_ptr<IsolatedProcess>> Start(std::string what, Init init);
  ~IsolatedProcess();  // closes the channel and reaps the child
  IsolatedProcess(const IsolatedProcess&) = delete;
  IsolatedProcess& operator=(const IsolatedProcess&) = delete;

  std::optional<Status> Call(std::string_view name, std::string_view payload, std::string* died);

 private:
  IsolatedProcess(std::string what, Init init) : what_(std::move(what)), init_(std::move(init)) {}
  Status Fork();
  // Closes the channel and reaps the child; says how it ended.
  std::string Stop();

  std::string what_;
  Init init_;
  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace kc::initwarm
