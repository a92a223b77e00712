// Eventually: polls a predicate until it holds or a deadline passes. The one
// helper every test uses for state reached asynchronously (a server, a worker
// thread, a kubelet), where there is no event to wait on.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

namespace kc::testutil {

// Returns true as soon as `pred()` is true; false once `timeout` has passed
// (after one last check). The pause between checks starts at 1 ms and doubles
// up to `max_poll`: in-process state is seen at once, and a long wait on a real
// server polls it only a few times a second.
inline bool Eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60),
                       std::chrono::milliseconds max_poll = std::chrono::milliseconds(200)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds poll(1);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, max_poll);
  }
  return pred();
}

}  // namespace kc::testutil
