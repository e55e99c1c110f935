#include "image/pull_progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::image {
namespace {

// A layer whose blob the store held before the pull was not fetched.
TEST(PullProgressTest, EachLayerIsSaidFetchedOrHereThenTheBytesInAll) {
  std::filesystem::path root = FreshTestDir("trainyard-pull-progress");
  std::string base = "sha256:" + std::string(64, 'a');
  std::string top = "sha256:" + std::string(64, 'b');
  std::filesystem::create_directories(root / "oci/blobs/sha256");
  std::ofstream(root / "oci/blobs/sha256" / std::string(64, 'a')) << "base";
  PullProgress progress(ImageStore(root.string(), {}));
  std::filesystem::remove_all(root);
  EXPECT_EQ(progress.Line("Getting image source signatures"), "");
  EXPECT_EQ(progress.Line("Copying blob " + base), "Layer sha256:aaaaaaaaaaaa here already");
  EXPECT_EQ(progress.Line("Copying blob " + top), "Fetching layer sha256:bbbbbbbbbbbb");
  EXPECT_EQ(progress.Line("Copying config sha256:cc"), "Copying config sha256:cc");
  StoredImage image{.layers = {{.digest = base, .size = 3 << 20}, {.digest = top, .size = 2048}},
                    .size = (3 << 20) + 2048 + 500};
  EXPECT_EQ(progress.Summary(image, 0.25),
            "2 layers, 3.0 MiB (1 layer, 2.0 KiB fetched) in 0.250s");
}

}  // namespace
}  // namespace trainyard::image
