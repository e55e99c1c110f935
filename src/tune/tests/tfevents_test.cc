// Event files as TensorFlow and tensorboardX write them, encoded here field
// by field: scalars as simple_value and as tensors, records cut short while
// being written, a corrupt record, and Katib's rule for which tags are a
// metric's.
#include "tune/tfevents.h"

#include <gtest/gtest.h>

#include "tune/tests/tfevents_encode.h"

namespace trainyard::tune {
namespace {

TEST(TfEventsTest, ScalarsOfEveryEncodingAreRead) {
  std::string file = VersionEvent() +
                     Event(1704067200.5, 1, {SimpleValue("loss", 0.25f), SimpleValue("lr", 0.1f)}) +
                     Event(1704067201.0, 2, {FloatTensor("accuracy", 0.875f, false)}) +
                     Event(1704067202.0, 3, {FloatTensor("accuracy", 0.9f, true)}) +
                     Event(1704067203.0, 4, {DoubleTensor("loss", 0.0625)});
  TfEventsRead read = ReadTfEvents(file);
  EXPECT_FALSE(read.corrupt);
  EXPECT_EQ(read.consumed, file.size());
  ASSERT_EQ(read.scalars.size(), 5u);
  EXPECT_EQ(read.scalars[0], (TfScalar{"loss", 1704067200.5, 1, "0.25"}));
  EXPECT_EQ(read.scalars[1].value, "0.1");  // a float32's shortest text, as numpy prints it
  EXPECT_EQ(read.scalars[2], (TfScalar{"accuracy", 1704067201.0, 2, "0.875"}));
  EXPECT_EQ(read.scalars[3].value, "0.9");
  EXPECT_EQ(read.scalars[4], (TfScalar{"loss", 1704067203.0, 4, "0.0625"}));
}

TEST(TfEventsTest, AFileBeingWrittenIsReadToItsLastWholeRecord) {
  std::string first = VersionEvent() + Event(1.0, 1, {SimpleValue("loss", 1.0f)});
  std::string second = Event(2.0, 2, {SimpleValue("loss", 0.5f)});
  for (size_t cut = 1; cut < second.size(); ++cut) {
    TfEventsRead read = ReadTfEvents(first + second.substr(0, cut));
    EXPECT_FALSE(read.corrupt) << cut;
    EXPECT_EQ(read.consumed, first.size()) << cut;
    EXPECT_EQ(read.scalars.size(), 1u) << cut;
  }
  // Read on from where the last read stopped: the second record alone.
  TfEventsRead rest = ReadTfEvents(second);
  ASSERT_EQ(rest.scalars.size(), 1u);
  EXPECT_EQ(rest.scalars[0].value, "0.5");
}

TEST(TfEventsTest, ACorruptRecordStopsTheRead) {
  std::string good = Event(1.0, 1, {SimpleValue("loss", 1.0f)});
  std::string bad = Event(2.0, 2, {SimpleValue("loss", 0.5f)});
  bad[bad.size() - 6] ^= 0x40;  // inside the data: its checksum no longer holds
  TfEventsRead read = ReadTfEvents(good + bad + good);
  EXPECT_TRUE(read.corrupt);
  EXPECT_EQ(read.consumed, good.size());
  EXPECT_EQ(read.scalars.size(), 1u);
  EXPECT_TRUE(ReadTfEvents("loss=0.1 and other text that is no event file").corrupt);
}

TEST(TfEventsTest, NonScalarTensorsAreSkipped) {
  std::string tensor = Key(1, 0) + Varint(1) + Bytes(5, Raw(1.0f) + Raw(2.0f));
  std::string string_tensor = Key(1, 0) + Varint(7) + Bytes(8, "text");
  TfEventsRead read =
      ReadTfEvents(Event(1.0, 1,
                         {Bytes(1, "histogram") + Bytes(8, tensor),
                          Bytes(1, "note") + Bytes(8, string_tensor), SimpleValue("loss", 2.0f)}));
  ASSERT_EQ(read.scalars.size(), 1u);
  EXPECT_EQ(read.scalars[0].tag, "loss");
}

TEST(TfEventsTest, KatibsTagAndDirectoryRule) {
  std::vector<TfScalar> scalars = {
      {"accuracy", 1.5, 1, "0.9"}, {"accuracy_top5", 1.5, 1, "0.99"}, {"loss", 2.0, 1, "0.3"}};
  // A plain name: every tag it starts, in any directory.
  std::vector<MetricSample> plain = MatchTfScalars({"accuracy"}, "/logs/train", scalars);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0], (MetricSample{"accuracy", "0.9", 1'500'000}));
  EXPECT_EQ(plain[1].value, "0.99");
  // With a directory: only event files in a directory ending with it.
  EXPECT_TRUE(MatchTfScalars({"test/loss"}, "/logs/train", scalars).empty());
  std::vector<MetricSample> test = MatchTfScalars({"test/loss"}, "/logs/test", scalars);
  ASSERT_EQ(test.size(), 1u);
  EXPECT_EQ(test[0], (MetricSample{"test/loss", "0.3", 2'000'000}));
}

}  // namespace
}  // namespace trainyard::tune
