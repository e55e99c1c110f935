#include "server/strategic_merge.h"

#include <gtest/gtest.h>

namespace trainyard::server {
namespace {

using api::Json;

Json Patched(const char* group, const char* kind, Json doc, const char* patch) {
  const PatchSchema* schema = PatchSchemaOf(group, kind);
  EXPECT_NE(schema, nullptr);
  Status applied = ApplyStrategicMergePatch(doc, Json::parse(patch), *schema);
  EXPECT_TRUE(applied.ok()) << applied.message();
  return doc;
}

// What kubectl apply sends when a manifest's second Service port changes
// from 81 to 8081: the new one, the old one deleted, and the order.
TEST(StrategicMergeTest, AServicesPortsMergeByPortInTheAppliedOrder) {
  Json svc = Json::parse(R"({"spec":{"ports":[{"port":80,"targetPort":80},
                                               {"port":81,"targetPort":81}],
                                      "selector":{"app":"a"}}})");
  Json out = Patched("", "Service", svc, R"({"spec":{
      "$setElementOrder/ports":[{"port":80},{"port":8081}],
      "ports":[{"port":8081,"targetPort":8081},{"$patch":"delete","port":81}]}})");
  EXPECT_EQ(out["spec"]["ports"], Json::parse(R"([{"port":80,"targetPort":80},
                                                   {"port":8081,"targetPort":8081}])"));
  EXPECT_EQ(out["spec"]["selector"], Json::parse(R"({"app":"a"})"));
}

TEST(StrategicMergeTest, ContainersAndTheirEnvMergeByNameWithinAJobsTemplate) {
  Json job = Json::parse(R"({"spec":{"template":{"spec":{"containers":[
      {"name":"main","image":"a","args":["x","y"],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
      {"name":"side","image":"s"}]}}}})");
  Json out = Patched("batch", "Job", job, R"({"spec":{"template":{"spec":{"containers":[
      {"name":"main","args":["z"],"env":[{"name":"B","value":"3"}]}]}}}})");
  const Json& main = out["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(main["image"], "a");
  EXPECT_EQ(main["args"], Json::parse(R"(["z"])")) << "args has no strategy: replaced";
  EXPECT_EQ(main["env"], Json::parse(R"([{"name":"A","value":"1"},{"name":"B","value":"3"}])"));
  EXPECT_EQ(out["spec"]["template"]["spec"]["containers"][1]["name"], "side");
}

TEST(StrategicMergeTest, ServerOnlyItemsKeepTheirPlaceAmongOrderedOnes) {
  Json pod =
      Json::parse(R"({"spec":{"containers":[{"name":"a"},{"name":"server"},{"name":"b"}]}})");
  Json out = Patched("", "Pod", pod, R"({"spec":{
      "$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}})");
  std::vector<std::string> names;
  for (const Json& c : out["spec"]["containers"]) names.push_back(c["name"]);
  // As Kubernetes merges them: "server" stood before "b" on the server.
  EXPECT_EQ(names, (std::vector<std::string>{"server", "b", "a"}));
}

TEST(StrategicMergeTest, DirectivesReplaceDeleteRetainAndDeleteFromPrimitiveLists) {
  Json pod = Json::parse(R"({"metadata":{"finalizers":["a","b","c"]},
      "spec":{"volumes":[{"name":"v","emptyDir":{}},{"name":"w","hostPath":{"path":"/x"}}],
              "nodeSelector":{"k":"v","j":"w"}}})");
  Json out = Patched("", "Pod", pod, R"({
      "metadata":{"$deleteFromPrimitiveList/finalizers":["b"],"finalizers":["d"]},
      "spec":{"volumes":[{"name":"v","$retainKeys":["name","configMap"],"configMap":{"name":"c"}},
                         {"name":"w","$patch":"delete"}],
              "nodeSelector":{"$patch":"replace","only":"this"}}})");
  // Without an order, what the patch adds comes first, as on Kubernetes.
  EXPECT_EQ(out["metadata"]["finalizers"], Json::parse(R"(["d","a","c"])"));
  EXPECT_EQ(out["spec"]["volumes"], Json::parse(R"([{"name":"v","configMap":{"name":"c"}}])"));
  EXPECT_EQ(out["spec"]["nodeSelector"], Json::parse(R"({"only":"this"})"));
  Json replaced = Patched("", "Pod", pod, R"({"spec":{"volumes":[{"$patch":"replace"},
                                                                  {"name":"only"}]}})");
  EXPECT_EQ(replaced["spec"]["volumes"], Json::parse(R"([{"name":"only"}])"));
}

TEST(StrategicMergeTest, MalformedPatchesAreRefusedByName) {
  const PatchSchema& pod = *PatchSchemaOf("", "Pod");
  Json doc = Json::parse(R"({"spec":{"containers":[{"name":"a"}]}})");
  Status no_key =
      ApplyStrategicMergePatch(doc, Json::parse(R"({"spec":{"containers":[{"image":"x"}]}})"), pod);
  EXPECT_EQ(no_key.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_key.message().find("does not contain declared merge key: name"), std::string::npos);
  Status bad_type = ApplyStrategicMergePatch(doc, Json::parse(R"({"spec":{"$patch":"zap"}})"), pod);
  EXPECT_NE(bad_type.message().find("unknown patch type"), std::string::npos);
  EXPECT_EQ(PatchSchemaOf("kubeflow.org", "PyTorchJob"), nullptr) << "custom resources: none";
}

}  // namespace
}  // namespace trainyard::server
