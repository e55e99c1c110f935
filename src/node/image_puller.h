// The node agent's image pulls, in the background and one at a time (the
// kubelet's default, serializeImagePulls): a pod waiting for its image
// does not hold up the agent's loop, and two pods of one image wait for
// one pull. Each pull is skopeo's (image/puller.h) with the host's
// credentials, and its layers are unpacked before it is said done, so the
// container's start that follows costs no unpacking. After each pull, the
// store is collected as the kubelet's image GC does (image/image_gc.h).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "api/json.h"
#include "common/mutex.h"
#include "common/status.h"
#include "image/image_gc.h"
#include "image/image_store.h"
#include "image/puller.h"
#include "image/reference.h"
#include "store/object_store.h"

namespace trainyard::node {

// What a container waiting for a pull says beside ContainerCreating (the
// reason every container has before it first starts).
inline constexpr std::string_view kPullingMessage = "Pulling image ";

// Whether a container waits for its image: the kubelet's reasons.
inline bool IsImageWait(const std::string& reason, const std::string& message) {
  return reason == "ErrImagePull" || reason == "ImagePullBackOff" ||
         reason == "ErrImageNeverPull" || reason == "InvalidImageName" ||
         (reason == "ContainerCreating" && message.starts_with(kPullingMessage));
}

// How often a container waiting for a pull looks whether it has ended.
inline constexpr std::chrono::milliseconds kImagePullPoll{200};

// The images (normalized references) of every container of every pod in
// `pods`, finished ones too, as the kubelet keeps an exited container's.
Result<std::set<std::string>> ImagesInUse(const store::ObjectReader& pods);

class ImagePuller {
 public:
  struct Outcome {
    Status status;       // OK, or why the pull failed (naming the image)
    double seconds = 0;  // how long it took
    uint64_t bytes = 0;  // the image's size
  };

  // Image garbage collection after each pull.
  struct Collection {
    image::ImageGcPolicy policy;
    // The images pods use (normalized references); called on the puller's
    // thread, so it reads what is safe there (the committed store).
    std::function<Result<std::set<std::string>>()> in_use;
    // Says what was removed, or why collecting failed.
    std::function<void(const std::string&)> report;
  };

  // The node agent looks for a pull's end on a timer (kImagePullPoll).
  ImagePuller(const image::ImageStore& store, Collection collection);
  ~ImagePuller();  // waits for the pull under way, drops the queued ones
  ImagePuller(const ImagePuller&) = delete;
  ImagePuller& operator=(const ImagePuller&) = delete;

  // Queues a pull of `ref` unless one is queued or under way, with
  // `auths` ({"auths": ...}, the pod's pull secrets over the host's) or,
  // when null, the host's credentials alone.
  void Request(const image::ImageReference& ref, api::Json auths = nullptr);
  // Whether a pull of `ref` (its String()) is queued or under way.
  bool Pending(const std::string& ref) const;
  // How the last pull of `ref` ended, once: taken, it is forgotten.
  std::optional<Outcome> Take(const std::string& ref);

 private:
  struct Queued {
    image::ImageReference ref;
    api::Json auths;
  };
  void Work();
  Result<image::StoredImage> Pull(const image::Puller& puller, const Queued& next);
  // Collects the store, keeping what pods use and what is queued.
  void Collect();

  const image::ImageStore& store_;
  const Collection collection_;
  mutable Mutex mu_;
  CondVar queued_;
  std::deque<Queued> queue_ TRAINYARD_GUARDED_BY(mu_);
  std::set<std::string> pending_ TRAINYARD_GUARDED_BY(mu_);
  std::map<std::string, Outcome> ended_ TRAINYARD_GUARDED_BY(mu_);
  bool stopping_ TRAINYARD_GUARDED_BY(mu_) = false;
  std::thread worker_;  // last: started once the rest is made
};

}  // namespace trainyard::node
