// The store read as skopeo leaves it: an OCI layout written here by hand
// (its digests made up: the store trusts skopeo to have checked them); and
// image garbage collection over it, the filesystem's fullness given.
#include "image/image_store.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"
#include "image/image_gc.h"
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
  // What went passed through the trash, emptied once the locks were let
  // go; a crashed prune's trash goes with the next one.
  EXPECT_TRUE(fs::is_empty(root_ / "trash"));
  fs::create_directories(root_ / "trash/99-0/0");
  ASSERT_TRUE(store.Prune({"localhost:5000/new:v1"}).ok());
  EXPECT_TRUE(fs::is_empty(root_ / "trash"));
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

class ImageGcTest : public ImageStoreTest {
 protected:
  // Three images sharing a base layer, each with a layer of its own of
  // 600 bytes: old (used an hour before `now_`), newer (half an hour), and
  // oldest (two hours), which a pod uses.
  void SetUp() override {
    ImageStoreTest::SetUp();
    AddLayer('0', "base");
    int i = 0;
    for (auto [name, manifest, layer, minutes] :
         {std::tuple{"r/old:1", 'a', '1', 60}, std::tuple{"r/newer:1", 'b', '2', 30},
          std::tuple{"r/oldest:1", 'c', '3', 120}}) {
      WriteBlob(Hex(layer), std::string(600, 'x'));
      AddImage(name, manifest, static_cast<char>('d' + i++), {'0', layer});
      UsedAgo(manifest, std::chrono::minutes(minutes));
    }
  }
  void UsedAgo(char manifest, std::chrono::minutes ago) {
    fs::path mark = root_ / "used" / Hex(manifest);
    fs::create_directories(mark.parent_path());
    std::ofstream(mark) << "";
    auto then = std::chrono::system_clock::to_time_t(now_ - ago);
    struct timespec times[2] = {{then, 0}, {then, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, mark.c_str(), times, 0), 0);
  }
  // The filesystem as 10,000 bytes with `used` of them used.
  static DiskUsageOf Disk(uint64_t used) {
    return [used](const std::string&) {
      return DiskUsage{.capacity = 10000, .available = 10000 - used};
    };
  }
  std::vector<std::string> Held() {
    std::vector<std::string> out;
    Result<std::vector<StoredImage>> images = Store().List();
    for (const StoredImage& image : *images) out.push_back(image.reference);
    return out;
  }

  static ImagesInUseOf InUse(std::set<std::string> images) {
    return [images] { return Result<std::set<std::string>>(images); };
  }

  std::chrono::system_clock::time_point now_ = std::chrono::system_clock::now();
  ImageGcPolicy policy_{.high_percent = 85, .low_percent = 80, .min_age = std::chrono::minutes(2)};
};

TEST_F(ImageGcTest, BelowTheHighThresholdNothingGoes) {
  int pods_read = 0;
  auto in_use = [&] {
    ++pods_read;
    return Result<std::set<std::string>>(std::set<std::string>());
  };
  Result<GcResult> gc = CollectImages(Store(), policy_, in_use, now_, Disk(8400));
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_EQ(pods_read, 0);  // below the threshold no pod is read
  EXPECT_EQ(gc->used_percent, 84);
  EXPECT_THAT(gc->pruned.removed, IsEmpty());
  EXPECT_EQ(Held().size(), 3u);
}

// 92% used, 80% the low mark: 1,200 bytes to free. The unused images go
// least recently used first, until that much is freed; the one a pod
// uses stays, however old.
TEST_F(ImageGcTest, AboveItTheLeastRecentlyUsedOfTheUnusedGoDownToTheLow) {
  Result<GcResult> gc = CollectImages(Store(), policy_, InUse({"r/oldest:1"}), now_, Disk(9200));
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_THAT(gc->pruned.removed, ElementsAre("r/old:1", "r/newer:1"));
  EXPECT_GE(gc->pruned.freed_bytes, 1200u);
  EXPECT_THAT(Held(), ElementsAre("r/oldest:1"));
  // The shared base layer stays with the image that uses it.
  EXPECT_TRUE(fs::exists(root_ / "oci/blobs/sha256" / Hex('0')));
}

TEST_F(ImageGcTest, LessToFreeTakesOnlyTheLeastRecentlyUsed) {
  Result<GcResult> gc = CollectImages(Store(), policy_, InUse({"r/oldest:1"}), now_, Disk(8550));
  ASSERT_TRUE(gc.ok());
  EXPECT_THAT(gc->pruned.removed, ElementsAre("r/old:1"));
}

// An image used within the minimum age stays: a pod may be about to start
// in it. The kubelet's 100% never collects.
TEST_F(ImageGcTest, RecentImagesStayAndAHundredPercentNeverCollects) {
  UsedAgo('a', std::chrono::minutes(1));
  UsedAgo('b', std::chrono::minutes(1));
  Result<GcResult> gc = CollectImages(Store(), policy_, InUse({"r/oldest:1"}), now_, Disk(9900));
  ASSERT_TRUE(gc.ok());
  EXPECT_THAT(gc->pruned.removed, IsEmpty());
  ImageGcPolicy never{.high_percent = 100, .low_percent = 0};
  EXPECT_THAT(CollectImages(Store(), never, InUse({}), now_, Disk(10000))->pruned.removed,
              IsEmpty());
}

TEST(ImageGcPolicyTest, ThresholdsArePercentagesLowAtMostHigh) {
  EXPECT_TRUE(CheckImageGcPolicy({}).ok());
  EXPECT_EQ(CheckImageGcPolicy({.high_percent = 101}).message(),
            "--image-gc-high-threshold 101: want a percentage, 0 to 100");
  EXPECT_EQ(CheckImageGcPolicy({.high_percent = 70, .low_percent = 80}).message(),
            "--image-gc-low-threshold 80 is above --image-gc-high-threshold 70: want low <= high");
}

}  // namespace
}  // namespace trainyard::image
