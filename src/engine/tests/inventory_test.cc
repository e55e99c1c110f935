// A Node document (a --nodes file, a manifest's Node, a cluster's Node) as
// the scheduler's node: what it offers, and what it says of scheduling, of
// the types Kubernetes gives them or refused.
#include "engine/inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::engine {
namespace {

using ::testing::HasSubstr;

api::Json Node(api::Json spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "n1"}, {"labels", {{"zone", "a"}}}}},
          {"spec", std::move(spec)},
          {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}}}}}};
}

TEST(InventoryTest, ANodeSaysWhatItOffersAndHowItIsScheduled) {
  Result<scheduler::Node> node = NodeFromDocument(
      Node({{"unschedulable", true},
            {"taints", {{{"key", "gpu"}, {"value", "yes"}, {"effect", "NoSchedule"}}}}}),
      "nodes.yaml");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_TRUE(node->unschedulable);
  ASSERT_EQ(node->taints.size(), 1u);
  EXPECT_EQ(node->allocatable.at("cpu"), 8000);
  EXPECT_EQ(node->labels.at("zone"), "a");
}

// A field of the wrong type is refused with where it is, never read as its
// default: a string "true" must not leave the node schedulable.
TEST(InventoryTest, AFieldOfTheWrongTypeIsRefusedNotReadAsItsDefault) {
  struct Case {
    api::Json spec;
    const char* said;
  } cases[] = {
      {{{"unschedulable", "true"}}, "spec.unschedulable: must be true or false"},
      {{{"taints", "gpu=yes:NoSchedule"}}, "spec.taints: must be a list"},
      {{{"taints", {{{"key", 1}, {"effect", "NoSchedule"}}}}},
       "spec.taints[0].key: must be a string"},
      {{{"taints", {{{"value", "x"}}}}}, "spec.taints[0]: Required value"},
  };
  for (const Case& c : cases) {
    Result<scheduler::Node> node = NodeFromDocument(Node(c.spec), "nodes.yaml");
    ASSERT_FALSE(node.ok()) << c.spec.dump();
    EXPECT_THAT(node.status().message(), HasSubstr(c.said));
    EXPECT_THAT(node.status().message(), HasSubstr("nodes.yaml: node n1"));
  }
  api::Json labels = Node(api::Json::object());
  labels["metadata"]["labels"] = "zone=a";
  EXPECT_THAT(NodeFromDocument(labels, "nodes.yaml").status().message(),
              HasSubstr("metadata.labels: must be a map"));
}

}  // namespace
}  // namespace trainyard::engine
