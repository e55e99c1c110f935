#include "scheduler/fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::Container ContainerWith(std::map<std::string, std::string> requests,
                             std::map<std::string, std::string> limits = {}) {
  api::Container c;
  for (const auto& [k, v] : requests) c.resources.requests[k] = *Quantity::Parse(v);
  for (const auto& [k, v] : limits) c.resources.limits[k] = *Quantity::Parse(v);
  return c;
}

Machine TwoGpuMachine() {
  return {.capacity = {{"cpu", 8000}, {"memory", (16LL << 30) * 1000}, {"nvidia.com/gpu", 2000}},
          .gpus = {"0", "1"}};
}

TEST(PodDemandTest, RequestsElseLimitsSummedAndTheLargestInitContainer) {
  api::PodSpec spec;
  spec.containers.push_back(ContainerWith({{"cpu", "500m"}}, {{"cpu", "2"}, {"memory", "1Gi"}}));
  spec.containers.push_back(ContainerWith({{"cpu", "1"}}));
  spec.init_containers.push_back(ContainerWith({{"cpu", "4"}}));
  spec.init_containers.push_back(ContainerWith({{"memory", "512Mi"}}));
  Amounts demand = PodDemandOf(spec);
  EXPECT_EQ(demand["cpu"], 4000);                   // init 4 > 0.5 + 1
  EXPECT_EQ(demand["memory"], (1LL << 30) * 1000);  // the limit, no request set
  EXPECT_EQ(demand.size(), 2u);
}

TEST(FitGangTest, AllOrNothingWithGpusPinnedLowestFirst) {
  InUse in_use{.amounts = {{"nvidia.com/gpu", 1000}}, .gpus = {"0"}};
  GangFit one =
      FitGang(TwoGpuMachine(), in_use, {{"a", {{"nvidia.com/gpu", 1000}}}, {"b", {{"cpu", 1000}}}});
  ASSERT_TRUE(one.fits) << one.reason;
  EXPECT_THAT(one.gpus["a"], ElementsAre("1"));
  EXPECT_THAT(one.gpus["b"], IsEmpty());

  GangFit two = FitGang(TwoGpuMachine(), in_use,
                        {{"a", {{"nvidia.com/gpu", 1000}}}, {"b", {{"nvidia.com/gpu", 1000}}}});
  EXPECT_FALSE(two.fits);
  EXPECT_TRUE(two.ever_fits);
  EXPECT_EQ(two.reason, "insufficient nvidia.com/gpu: needs 2, 1 of 2 free");
  EXPECT_THAT(two.gpus, IsEmpty()) << "a gang that does not fit gets nothing";
}

TEST(FitGangTest, MoreThanTheMachineNeverFits) {
  GangFit fit = FitGang(TwoGpuMachine(), {},
                        {{"a", {{"nvidia.com/gpu", 2000}}}, {"b", {{"nvidia.com/gpu", 1000}}}});
  EXPECT_FALSE(fit.fits);
  EXPECT_FALSE(fit.ever_fits);
  EXPECT_EQ(fit.reason, "needs 3 nvidia.com/gpu, this machine has 2");
  GangFit other = FitGang(TwoGpuMachine(), {}, {{"a", {{"example.com/fpga", 1000}}}});
  EXPECT_FALSE(other.ever_fits);
  EXPECT_EQ(other.reason, "needs 1 example.com/fpga, this machine has 0");
}

TEST(FitGangTest, CpuAndMemoryAreCountedInMilliUnits) {
  InUse in_use{.amounts = {{"cpu", 7500}}};
  GangFit fit = FitGang(TwoGpuMachine(), in_use, {{"a", {{"cpu", 600}}}});
  EXPECT_EQ(fit.reason, "insufficient cpu: needs 600m, 500m of 8 free");
  GangFit memory = FitGang(TwoGpuMachine(), {}, {{"a", {{"memory", (32LL << 30) * 1000}}}});
  EXPECT_EQ(memory.reason, "needs 32Gi memory, this machine has 16Gi");
  EXPECT_TRUE(FitGang(TwoGpuMachine(), in_use, {{"a", {{"cpu", 500}}}}).fits);
}

}  // namespace
}  // namespace trainyard::scheduler
