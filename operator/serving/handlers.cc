#include "operator/serving/handlers.h"

#include <memory>

#include "kube/resource.h"

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
    return answer(ReviewKernelCacheValidation(req.body, d->list, d->storage_class));
  });
}

StorageClassFacts LookUpStorageClass(kube::Client& client, const std::string& name) {
  StorageClassFacts facts;
  auto sc = client.Get(kube::resources::kStorageClasses, "", name);
  if (sc.ok()) {
    facts.class_exists = Known::kYes;
    return facts;
  }
  if (!IsNotFound(sc.status())) return facts;
  facts.class_exists = Known::kNo;
  bool named = false;
  kube::ListOptions options;
  options.limit = 500;
  auto listed = kube::ListEach(client, kube::resources::kPersistentVolumes, "", options, {},
                               [&](kube::Json&& pv) {
                                 const auto spec = pv.find("spec");
                                 if (spec == pv.end() || !spec->is_object()) return;
                                 const auto cls = spec->find("storageClassName");
                                 if (cls != spec->end() && cls->is_string() && *cls == name) {
                                   named = true;
                                 }
                               });
  if (listed.ok()) facts.volume_names_it = named ? Known::kYes : Known::kNo;
  return facts;
}

}  // namespace kc::webhook
