// The log tailer's line splitting: complete lines as written, and a line
// without end printed in bounded pieces.
#include "cli/log_tail.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainyard::cli {
namespace {

using ::testing::ElementsAre;

class LineSplitterTest : public ::testing::Test {
 protected:
  void Feed(LineSplitter& lines, std::string_view bytes) {
    lines.Feed(bytes, [&](std::string_view line) { out_.emplace_back(line); });
  }
  void Flush(LineSplitter& lines) {
    lines.Flush([&](std::string_view line) { out_.emplace_back(line); });
  }
  std::vector<std::string> out_;
};

TEST_F(LineSplitterTest, CompleteLinesAcrossFeeds) {
  LineSplitter lines(8);
  Feed(lines, "a\nbc");
  Feed(lines, "d\n\nef");
  EXPECT_THAT(out_, ElementsAre("a", "bcd", ""));
  Flush(lines);
  EXPECT_THAT(out_, ElementsAre("a", "bcd", "", "ef"));
  Flush(lines);
  EXPECT_EQ(out_.size(), 4u);
}

TEST_F(LineSplitterTest, ALongLineComesInPiecesOfTheBound) {
  LineSplitter lines(4);
  Feed(lines, "abcdefghij");
  EXPECT_THAT(out_, ElementsAre("abcd", "efgh"));  // "ij" held
  Feed(lines, "kl");
  EXPECT_THAT(out_, ElementsAre("abcd", "efgh"));  // "ijkl" held: it may end here
  Feed(lines, "\nxyzw\n");
  EXPECT_THAT(out_, ElementsAre("abcd", "efgh", "ijkl", "xyzw"));  // no empty line
  Feed(lines, "1234");
  Feed(lines, "5\n");
  EXPECT_THAT(out_, ElementsAre("abcd", "efgh", "ijkl", "xyzw", "1234", "5"));
}

// 100 MB without a newline, fed as the tailer reads it: each piece is the
// bound, and never more is held.
TEST_F(LineSplitterTest, AHundredMegabytesWithoutANewlineStayBounded) {
  LineSplitter lines;
  std::string chunk(65536, 'x');
  size_t pieces = 0;
  size_t largest = 0;
  for (int i = 0; i < 1600; ++i) {
    lines.Feed(chunk, [&](std::string_view piece) {
      ++pieces;
      largest = std::max(largest, piece.size());
    });
  }
  EXPECT_EQ(largest, kMaxLogLine);
  EXPECT_EQ(pieces, 1599u);  // the last one is held until the line ends or is flushed
}

}  // namespace
}  // namespace trainyard::cli
