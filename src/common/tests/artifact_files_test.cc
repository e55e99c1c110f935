// A job's output folder read without following what its replicas planted
// there, and written whole.
#include "common/artifact_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::vector<std::string> PathsOf(const ArtifactListing& listing) {
  std::vector<std::string> paths;
  for (const Artifact& a : listing.items) paths.push_back(a.path + (a.directory ? "/" : ""));
  return paths;
}

class ArtifactFilesTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = FreshTestDir("artifacts"); }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ArtifactFilesTest, PathsAreRelativeNamesAlone) {
  EXPECT_TRUE(CheckArtifactPath("model/best.pt").ok());
  // Names of uploads being written are trainyard's: never listed, so
  // never taken from a client either.
  for (std::string_view bad : {"", "/etc/passwd", "a/../../x", "..", "a//b", "./a", "a/",
                               ".trainyard-upload-x", "d/.trainyard-upload-1"}) {
    EXPECT_EQ(CheckArtifactPath(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(CheckArtifactPath(std::string(5000, 'a')).code(), StatusCode::kInvalidArgument);
}

TEST_F(ArtifactFilesTest, ListsEveryFileOrOneLevelInPathOrder) {
  WriteFile(root_ / "model" / "best.pt", "weights");
  WriteFile(root_ / "model" / "last.pt", "w");
  WriteFile(root_ / "loss.png", "png");
  Result<ArtifactListing> all = ListArtifacts(root_, "", true, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(PathsOf(*all), ElementsAre("loss.png", "model/best.pt", "model/last.pt"));
  EXPECT_EQ(all->items[1].size, 7);
  Result<ArtifactListing> top = ListArtifacts(root_, "", false, 100);
  EXPECT_THAT(PathsOf(*top), ElementsAre("loss.png", "model/"));
  Result<ArtifactListing> model = ListArtifacts(root_, "model", false, 100);
  EXPECT_THAT(PathsOf(*model), ElementsAre("model/best.pt", "model/last.pt"));
  Result<ArtifactListing> cut = ListArtifacts(root_, "", true, 2);
  EXPECT_EQ(cut->items.size(), 2u);
  EXPECT_TRUE(cut->truncated);
  // Too deep to list is said to be cut short too.
  fs::path deep = root_;
  for (int i = 0; i < 40; ++i) deep /= "d";
  WriteFile(deep / "x", "x");
  EXPECT_TRUE(ListArtifacts(root_, "", true, 100)->truncated);
  // A job that wrote nothing has no folder: nothing to list, no error.
  EXPECT_TRUE(ListArtifacts(root_ / "never", "", true, 100)->items.empty());
  EXPECT_EQ(ListArtifacts(root_, "nope", false, 100).status().code(), StatusCode::kNotFound);
}

TEST_F(ArtifactFilesTest, LinksAndFifosPlantedByAReplicaAreNoArtifacts) {
  WriteFile(root_ / "secret-outside", "the host's");
  fs::create_directories(root_ / "job");
  fs::create_symlink(root_ / "secret-outside", root_ / "job" / "shadow");
  fs::create_directory_symlink(root_, root_ / "job" / "up");
  ASSERT_EQ(mkfifo((root_ / "job" / "pipe").c_str(), 0600), 0);
  WriteFile(root_ / "job" / "real.txt", "ok");
  // A hard link to a file it may not read is no artifact either.
  fs::create_hard_link(root_ / "secret-outside", root_ / "job" / "hard");
  fs::path job = root_ / "job";
  EXPECT_THAT(PathsOf(*ListArtifacts(job, "", true, 100)), ElementsAre("real.txt"));
  for (std::string_view path : {"shadow", "up/secret-outside", "pipe", "hard"}) {
    EXPECT_EQ(OpenArtifact(job, path).status().code(), StatusCode::kNotFound) << path;
  }
  Result<OpenedArtifact> real = OpenArtifact(job, "real.txt");
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(real->size, 2);
  // Nor is a link written through.
  EXPECT_FALSE(WriteArtifact(job, "up/x", "y").ok());
  EXPECT_FALSE(fs::exists(root_ / "x"));
}

TEST_F(ArtifactFilesTest, AWrittenArtifactAppearsWholeInItsFolders) {
  ASSERT_TRUE(WriteArtifact(root_ / "run", "plots/loss.png", "png bytes").ok());
  // Rewritten whole, and nothing of the upload's own left to list.
  ASSERT_TRUE(WriteArtifact(root_ / "run", "plots/loss.png", "png").ok());
  EXPECT_EQ(ListArtifacts(root_ / "run", "", true, 100)->items.at(0).size, 3);
  EXPECT_THAT(PathsOf(*ListArtifacts(root_ / "run", "", true, 100)), ElementsAre("plots/loss.png"));
  EXPECT_EQ(WriteArtifact(root_ / "run", "plots/loss.png/x", "y").code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace trainyard
