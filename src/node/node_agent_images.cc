// The node agent's image pulls, with the kubelet's reasons and events: a
// container waits (ContainerCreating while its image is pulled;
// ErrImagePull, then ImagePullBackOff with the restart back-off, while
// pulls fail; ErrImageNeverPull; InvalidImageName) and its pod stays
// Pending.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "image/pull_auth.h"
#include "image/reference.h"
#include "node/node_agent.h"

namespace trainyard::node {
namespace {

bool Waiting(const api::ContainerStatus& status, std::string_view reason) {
  return status.state.waiting && status.state.waiting->reason == reason;
}

// The kubelet's back-off, with its steps counted from `failures`.
Duration PullBackoff(const NodeAgentOptions& options, int32_t failures) {
  Duration d = options.restart_backoff;
  for (int32_t i = 1; i < failures && d < options.max_restart_backoff; ++i) d *= 2;
  return std::min(d, options.max_restart_backoff);
}

}  // namespace

Result<api::Json> NodeAgent::PullAuthsOf(const api::Pod& pod, const Replica& replica,
                                         const std::string& container) {
  const api::Json* refs = api::FindAt(pod.spec.extra, {"imagePullSecrets"});
  if (refs == nullptr || !refs->is_array() || refs->empty()) return api::Json(nullptr);
  std::vector<api::Json> auths;
  std::vector<std::string> unusable;
  for (const api::Json& ref : *refs) {
    std::string name = api::StringAt(ref, "name");
    Result<api::Json> secret = options_.store->Get({"Secret", pod.metadata.namespace_, name});
    if (!secret.ok() && secret.status().code() != StatusCode::kNotFound) return secret.status();
    Result<api::Json> secret_auths =
        secret.ok() ? image::AuthsOfSecret(*secret) : Result<api::Json>(secret.status());
    if (secret_auths.ok()) {
      auths.push_back(*std::move(secret_auths));
    } else {
      unusable.push_back(name);
    }
  }
  // As the kubelet: the pull goes on with what there is.
  if (!unusable.empty()) {
    Event(replica, container, "Warning", "FailedToRetrieveImagePullSecret",
          fmt::format("Unable to retrieve some image pull secrets ({}); attempting to pull the "
                      "image may not succeed.",
                      fmt::join(unusable, ", ")));
  }
  if (auths.empty()) return api::Json(nullptr);
  return image::MergedAuths(auths, image::HostAuthFile());
}

void NodeAgent::WaitForImage(api::Pod& pod, Replica& replica, const Slot& slot,
                             const std::string& reason, const std::string& message,
                             Duration retry_after) {
  api::ContainerStatus& status = StatusOf(pod, slot);
  status.state = api::ContainerState{};
  status.state.waiting = api::ContainerStateWaiting{.reason = reason, .message = message};
  replica.runs[slot.spec->name].restart_at = options_.clock->Now() + retry_after;
}

Result<bool> NodeAgent::ImageReady(api::Pod& pod, Replica& replica, const Slot& slot) {
  const api::Container& container = *slot.spec;
  ContainerRun& run = replica.runs[container.name];
  api::ContainerStatus& status = StatusOf(pod, slot);
  const std::string& image = container.image;
  auto event = [&](const char* type, const char* reason, const std::string& message) {
    Event(replica, container.name, type, reason, message);
  };
  Result<image::ImageReference> ref = image::ParseImageReference(image);
  if (!ref.ok()) {
    std::string message =
        fmt::format("Failed to apply default image tag \"{}\": {}", image, ref.status().message());
    if (!Waiting(status, "InvalidImageName")) event("Warning", "InspectFailed", message);
    WaitForImage(pod, replica, slot, "InvalidImageName", message, options_.max_restart_backoff);
    return false;
  }
  std::string name = ref->String();
  if (std::optional<ImagePuller::Outcome> ended = options_.image_puller->Take(name)) {
    if (ended->status.ok()) {
      event("Normal", "Pulled",
            fmt::format("Successfully pulled image \"{}\" in {:.3f}s. Image size: {} bytes.", image,
                        ended->seconds, ended->bytes));
      run.image_pulled = true;
      run.pull_failures = 0;
      return true;
    }
    std::string message =
        fmt::format("Failed to pull image \"{}\": {}", image, ended->status.message());
    // The kubelet follows with "Error: ErrImagePull", of the same reason:
    // a pod keeps one event per reason here, and this one says why.
    event("Warning", "Failed", message);
    run.pull_failures += 1;
    // Said until the next look, which backs off (ImagePullBackOff).
    WaitForImage(pod, replica, slot, "ErrImagePull", message, options_.restart_backoff);
    return false;
  }
  // A pull after failed ones still shows the back-off, as the kubelet's.
  bool backing_off = Waiting(status, "ImagePullBackOff");
  std::string pulling = backing_off ? "ImagePullBackOff" : "ContainerCreating";
  std::string pulling_message =
      backing_off ? status.state.waiting->message : fmt::format("{}\"{}\"", kPullingMessage, image);
  if (options_.image_puller->Pending(name)) {
    WaitForImage(pod, replica, slot, pulling, pulling_message, kImagePullPoll);
    return false;
  }
  std::string policy = api::StringAt(container.extra, "imagePullPolicy");
  if (policy.empty()) policy = image::DefaultPullPolicy(*ref);
  ASSIGN_OR_RETURN(std::optional<image::StoredImage> held, options_.images->Find(*ref));
  if (held && (policy != "Always" || run.image_pulled)) {
    if (!run.image_pulled) {
      event("Normal", "Pulled",
            fmt::format("Container image \"{}\" already present on machine", image));
    }
    run.image_pulled = true;
    return true;
  }
  if (!held && policy == "Never") {
    std::string message =
        fmt::format("Container image \"{}\" is not present with pull policy of Never", image);
    if (!Waiting(status, "ErrImageNeverPull")) event("Warning", "ErrImageNeverPull", message);
    WaitForImage(pod, replica, slot, "ErrImageNeverPull", message, options_.max_restart_backoff);
    return false;
  }
  // A pull that failed before waits out its back-off as ImagePullBackOff.
  if (Waiting(status, "ErrImagePull")) {
    event("Normal", "BackOff", fmt::format("Back-off pulling image \"{}\"", image));
    std::string message = fmt::format("Back-off pulling image \"{}\"", image);
    WaitForImage(pod, replica, slot, "ImagePullBackOff", message,
                 PullBackoff(options_, run.pull_failures));
    return false;
  }
  ASSIGN_OR_RETURN(api::Json auths, PullAuthsOf(pod, replica, container.name));
  event("Normal", "Pulling", fmt::format("Pulling image \"{}\"", image));
  options_.image_puller->Request(*ref, std::move(auths));
  WaitForImage(pod, replica, slot, pulling, pulling_message, kImagePullPoll);
  return false;
}

}  // namespace trainyard::node
