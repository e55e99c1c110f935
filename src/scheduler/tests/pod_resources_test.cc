// What a pod asks of a node, as Kubernetes counts it: its containers'
// sum, or more while an init container runs; sidecars count throughout.
#include <gtest/gtest.h>

#include "scheduler/resources.h"

namespace trainyard::scheduler {
namespace {

api::Container Asking(const std::string& name, const char* cpu, const std::string& restart = "") {
  api::Container c;
  c.name = name;
  c.resources.requests["cpu"] = *Quantity::Parse(cpu);
  c.restart_policy = restart;
  return c;
}

TEST(PodResourcesTest, TheMostOfWhatRunsAtOnce) {
  api::PodSpec spec;
  spec.containers = {Asking("a", "1"), Asking("b", "2")};
  EXPECT_EQ(PodResourcesOf(spec).requests.at("cpu"), 3000);
  // An init container larger than the containers together sets the need.
  spec.init_containers = {Asking("fetch", "4")};
  EXPECT_EQ(PodResourcesOf(spec).requests.at("cpu"), 4000);
  // A sidecar runs beside everything after it, the containers included.
  spec.init_containers = {Asking("proxy", "500m", "Always"), Asking("fetch", "3")};
  EXPECT_EQ(PodResourcesOf(spec).requests.at("cpu"), 3500);
  spec.init_containers = {Asking("proxy", "2", "Always"), Asking("fetch", "1")};
  EXPECT_EQ(PodResourcesOf(spec).requests.at("cpu"), 5000);
}

}  // namespace
}  // namespace trainyard::scheduler
