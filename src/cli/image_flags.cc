#include "cli/image_flags.h"

#include "common/clock.h"

namespace trainyard::cli {

Result<image::ImageGcPolicy> ImageFlags::Policy() const {
  std::optional<Duration> age = ParseGoDuration(min_age);
  if (!age || *age < Duration::zero()) {
    return InvalidArgumentError("--image-minimum-gc-age " + min_age +
                                ": want a duration of 0s or more, such as 2m");
  }
  image::ImageGcPolicy policy{.high_percent = high_percent,
                              .low_percent = low_percent,
                              .min_age = std::chrono::duration_cast<std::chrono::seconds>(*age)};
  RETURN_IF_ERROR(image::CheckImageGcPolicy(policy));
  return policy;
}

}  // namespace trainyard::cli
