// Whose run and output folder a pod's replicas get: found up the
// controllers' chain, and carried on the pod as one annotation.
#include "api/tracking.h"

#include <gtest/gtest.h>

#include <map>

namespace trainyard::api {
namespace {

// A namespace of objects by "Kind/name".
ObjectLookup LookupOf(const std::map<std::string, Json>& objects) {
  return [&objects](const std::string& kind, const std::string& name) -> std::optional<Json> {
    auto it = objects.find(kind + "/" + name);
    if (it == objects.end()) return std::nullopt;
    return it->second;
  };
}

Json Object(const std::string& uid, Json controller = nullptr, Json labels = Json::object()) {
  Json meta = {{"uid", uid}, {"labels", std::move(labels)}};
  if (!controller.is_null()) {
    controller["controller"] = true;
    meta["ownerReferences"] = Json::array({std::move(controller)});
  }
  return {{"metadata", std::move(meta)}};
}

TEST(TrackingTest, ATrainJobsPodLogsToTheTrainJobAndATrialsJobToItsTrial) {
  std::map<std::string, Json> objects = {
      {"TrainJob/t", Object("u-train")},
      {"JobSet/t", Object("u-set", {{"kind", "TrainJob"}, {"name", "t"}})},
      {"Job/t-node-0", Object("u-job", {{"kind", "JobSet"}, {"name", "t"}})},
      {"Trial/x", Object("u-trial")},
      {"PyTorchJob/x", Object("u-torch", nullptr, {{"katib.kubeflow.org/trial", "x"}})},
  };
  std::optional<TrackedOwner> train = TrackedOwnerUp("Job", "t-node-0", LookupOf(objects));
  ASSERT_TRUE(train.has_value());
  EXPECT_EQ(FormatTrackedOwner(*train), "TrainJob/t/u-train");
  std::optional<TrackedOwner> trial = TrackedOwnerUp("PyTorchJob", "x", LookupOf(objects));
  ASSERT_TRUE(trial.has_value());
  EXPECT_EQ(FormatTrackedOwner(*trial), "Trial/x/u-trial");
  EXPECT_FALSE(TrackedOwnerUp("Job", "missing", LookupOf(objects)).has_value());
}

TEST(TrackingTest, AMarkIsReadBackOnlyWhenItHasItsThreeParts) {
  std::optional<TrackedOwner> owner = ParseTrackedOwner("PyTorchJob/mnist/0f3c-uid");
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->kind, "PyTorchJob");
  EXPECT_EQ(owner->name, "mnist");
  EXPECT_EQ(owner->uid, "0f3c-uid");
  for (const char* bad :
       {"", "PyTorchJob", "PyTorchJob/mnist", "PyTorchJob/mnist/", "/mnist/u", "PyTorchJob//u",
        "PyTorchJob/mnist/u/../x", "../../x", "Pod/p/u", "PyTorchJob/m/UP"}) {
    EXPECT_FALSE(ParseTrackedOwner(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace trainyard::api
