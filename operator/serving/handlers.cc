#include "operator/serving/handlers.h"

#include <memory>

namespace kc::webhook {

EventQueue::EventQueue(std::function<void(const WarningEvent&)> write)
    : write_(std::move(write)), thread_([this] {
        std::unique_lock<std::mutex> l(mu_);
        while (true) {
          cv_.wait(l, [this] { return done_ || !pending_.empty(); });
          if (pending_.empty()) return;
          WarningEvent e = std::move(pending_.front());
          pending_.pop_front();
          l.unlock();
          write_(e);
          l.lock();
        }
      }) {}

EventQueue::~EventQueue() {
  {
    std::lock_guard<std::mutex> l(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void EventQueue::Push(WarningEvent e) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (pending_.size() >= kMaxPendingEvents) {
      ++dropped_;
      return;
    }
    pending_.push_back(std::move(e));
  }
  cv_.notify_one();
}

size_t EventQueue::dropped() const {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}

void RegisterWebhookHandlers(op::HttpServer& server, WebhookDeps deps) {
  auto d = std::make_shared<WebhookDeps>(std::move(deps));
  auto answer = [d](ReviewAnswer a) {
    if (d->events != nullptr) {
      for (WarningEvent& e : a.events) d->events->Push(std::move(e));
    }
    return op::HttpResponse{a.http_status, "application/json", std::move(a.body)};
  };
  server.HandlePost(kMutatePodsPath, [d, answer](const op::HttpRequest& req) {
    return answer(ReviewPodMutation(req.body, d->list, d->settings));
  });
  server.HandlePost(kValidateKernelCachesPath, [d, answer](const op::HttpRequest& req) {
    return answer(ReviewKernelCacheValidation(req.body, d->list, d->storage_class_exists));
  });
}

}  // namespace kc::webhook
