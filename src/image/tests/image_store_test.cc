// The store read as skopeo leaves it: an OCI layout written here by hand
// (its digests made up: the store trusts skopeo to have checked them).
#include "image/image_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"
#include "image/tests/layer_tar.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Hex(char c) { return std::string(64, c); }

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestDir("trainyard-images");
    fs::create_directories(root_ / "oci/blobs/sha256");
    index_ = api::Json{{"schemaVersion", 2}, {"manifests", api::Json::array()}};
  }
  void TearDown() override { fs::remove_all(root_); }

  void WriteBlob(const std::string& hex, const std::string& text) {
    std::ofstream(root_ / "oci/blobs/sha256" / hex) << text;
  }

  // An image of `layers` (base first, each a hex digest whose blob is
  // written with `WriteLayer`) and a config, named `reference`.
  void AddImage(const std::string& reference, char manifest, char config,
                const std::vector<char>& layers) {
    api::Json layer_list = api::Json::array();
    for (char layer : layers) {
      layer_list.push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
                            {"digest", "sha256:" + Hex(layer)},
                            {"size", 100}});
    }
    WriteBlob(Hex(config), R"({"os":"linux","config":{"Cmd":["/bin/sh"],"WorkingDir":"/app"}})");
    WriteBlob(Hex(manifest),
              api::Json{{"schemaVersion", 2},
                        {"config", {{"digest", "sha256:" + Hex(config)}, {"size", 10}}},
                        {"layers", layer_list}}
                  .dump());
    index_["manifests"].push_back(
        {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
         {"digest", "sha256:" + Hex(manifest)},
         {"size", 5},
         {"annotations", {{"org.opencontainers.image.ref.name", reference}}}});
    std::ofstream(root_ / "oci/index.json") << index_.dump();
  }

  void AddLayer(char hex, const std::string& file) {
    testing::WriteLayer((root_ / "oci/blobs/sha256" / Hex(hex)).string(),
                        {{.path = file, .content = file}});
  }

  ImageStore Store() { return ImageStore(root_.string(), {.privileged = geteuid() == 0}); }

  fs::path root_;
  api::Json index_;
};

TEST_F(ImageStoreTest, AnImageIsFoundByItsNormalizedReference) {
  AddLayer('1', "base");
  AddImage("docker.io/library/busybox:latest", 'a', 'c', {'1'});
  ImageStore store = Store();
  Result<std::optional<StoredImage>> found = store.Find(*ParseImageReference("busybox"));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->manifest_digest, "sha256:" + Hex('a'));
  EXPECT_EQ((*found)->size, 5u + 10u + 100u);
  EXPECT_FALSE(store.Find(*ParseImageReference("busybox:1.36"))->has_value());
  Result<ImageConfig> config = store.ConfigOf(**found);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->working_dir, "/app");
}

TEST_F(ImageStoreTest, LayersAreUnpackedOnceAndListedTopFirst) {
  AddLayer('1', "base");
  AddLayer('2', "top");
  AddImage("localhost:5000/app:v1", 'a', 'c', {'1', '2'});
  ImageStore store = Store();
  StoredImage image = **store.Find(*ParseImageReference("localhost:5000/app:v1"));
  Result<std::vector<std::string>> dirs = store.UnpackedLayers(image);
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  EXPECT_THAT(*dirs, ElementsAre(root_.string() + "/layers/sha256-" + Hex('2'),
                                 root_.string() + "/layers/sha256-" + Hex('1')));
  EXPECT_TRUE(fs::exists((*dirs)[0] + "/top"));
  // Again: nothing is unpacked anew (a file added by hand stays).
  std::ofstream((*dirs)[1] + "/marker") << "x";
  ASSERT_TRUE(store.UnpackedLayers(image).ok());
  EXPECT_TRUE(fs::exists((*dirs)[1] + "/marker"));
}

TEST_F(ImageStoreTest, PruneKeepsWhatKeptImagesShareAndRemovesTheRest) {
  AddLayer('1', "shared");
  AddLayer('2', "only-old");
  AddImage("localhost:5000/old:v1", 'a', 'c', {'1', '2'});
  AddImage("localhost:5000/new:v1", 'b', 'd', {'1'});
  ImageStore store = Store();
  ASSERT_TRUE(
      store.UnpackedLayers(**store.Find(*ParseImageReference("localhost:5000/old:v1"))).ok());
  Result<PruneResult> pruned = store.Prune({"localhost:5000/new:v1"});
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_THAT(pruned->removed, ElementsAre("localhost:5000/old:v1"));
  EXPECT_GT(pruned->freed_bytes, 0u);
  EXPECT_TRUE(fs::exists(root_ / "oci/blobs/sha256" / Hex('1')));
  EXPECT_FALSE(fs::exists(root_ / "oci/blobs/sha256" / Hex('2')));
  EXPECT_FALSE(fs::exists(root_ / "oci/blobs/sha256" / Hex('a')));
  EXPECT_TRUE(fs::exists(root_ / ("layers/sha256-" + Hex('1'))));
  EXPECT_FALSE(fs::exists(root_ / ("layers/sha256-" + Hex('2'))));
  Result<std::vector<StoredImage>> left = store.List();
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].reference, "localhost:5000/new:v1");
  EXPECT_THAT(store.Prune({"localhost:5000/new:v1"})->removed, IsEmpty());
}

TEST_F(ImageStoreTest, AnEmptyStoreHoldsNothing) {
  fs::remove_all(root_ / "oci");
  ImageStore store = Store();
  EXPECT_THAT(*store.List(), IsEmpty());
  EXPECT_FALSE(store.Find(*ParseImageReference("busybox"))->has_value());
}

// A finished pull's layout names its image in the store, replacing an
// older pull of the same reference and keeping the others; the first pull
// makes the layout.
TEST_F(ImageStoreTest, APulledLayoutIsMergedReplacingItsReferenceOnly) {
  fs::remove_all(root_ / "oci/index.json");
  AddLayer('1', "base");
  AddImage("localhost:5000/app:v1", 'a', 'c', {'1'});
  AddImage("localhost:5000/app:v2", 'b', 'c', {'1'});
  fs::path pulled = root_ / "staging/1-0";
  fs::create_directories(pulled);
  api::Json staged = {{"schemaVersion", 2}, {"manifests", {index_["manifests"][1]}}};
  std::ofstream(pulled / "index.json") << staged.dump();
  std::ofstream(root_ / "oci/index.json")
      << api::Json{{"schemaVersion", 2}, {"manifests", {index_["manifests"][0]}}}.dump();
  ImageStore store = Store();
  ASSERT_TRUE(store.AddPulled(pulled.string()).ok());
  std::vector<std::string> references;
  Result<std::vector<StoredImage>> listed = store.List();
  ASSERT_TRUE(listed.ok());
  for (const StoredImage& image : *listed) references.push_back(image.reference);
  EXPECT_THAT(references, ElementsAre("localhost:5000/app:v1", "localhost:5000/app:v2"));
  // Again: still one of each.
  ASSERT_TRUE(store.AddPulled(pulled.string()).ok());
  EXPECT_EQ(store.List()->size(), 2u);
  // Into a store without a layout yet.
  fs::remove_all(root_ / "oci/index.json");
  ASSERT_TRUE(store.AddPulled(pulled.string()).ok());
  EXPECT_EQ(store.List()->size(), 1u);
  EXPECT_TRUE(fs::exists(root_ / "oci/oci-layout"));
}

// A pull holds use.lock for its whole length (minutes, for a large image):
// readers and unpacks go on beside it; only a prune waits.
TEST_F(ImageStoreTest, AReaderAndAnUnpackNeverWaitForAPull) {
  AddLayer('1', "base");
  AddImage("localhost:5000/app:v1", 'a', 'c', {'1'});
  ImageStore store = Store();
  Result<StoreLock> pulling = StoreLock::Take(store.UseLockPath(), /*exclusive=*/false);
  ASSERT_TRUE(pulling.ok());
  // flock between two descriptors of one process conflicts as between two
  // processes: were either to want use.lock exclusively, it would hang here.
  Result<std::optional<StoredImage>> found =
      store.Find(*ParseImageReference("localhost:5000/app:v1"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_TRUE(store.UnpackedLayers(**found).ok());
}

}  // namespace
}  // namespace trainyard::image
