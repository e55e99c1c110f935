// TensorFlow event files (what tf.summary, tensorboardX and
// torch.utils.tensorboard write: "events.out.tfevents.*"), read for Katib's
// TensorFlowEvent collector.
//
// A file is a sequence of TFRecords (a little-endian uint64 length, its
// masked CRC-32C, the data, the data's masked CRC-32C), each an `Event`
// protocol buffer. Only what the collector needs is decoded, straight from
// the wire format: an event's wall_time, step and summary values, and of
// those the tag and a scalar (simple_value, or a one-element tensor).
// Reading stops at a record still being written, so that a file can be
// read again from where the last read stopped while it grows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tune/metrics.h"

namespace trainyard::tune {

struct TfScalar {
  std::string tag;
  double wall_time = 0;  // seconds since the epoch
  int64_t step = 0;
  std::string value;  // as text: the shortest that reads back the same
  bool operator==(const TfScalar&) const = default;
};

struct TfEventsRead {
  std::vector<TfScalar> scalars;
  size_t consumed = 0;   // bytes of whole records read; the rest is unfinished
  bool corrupt = false;  // a record failed its checksum: nothing after it is read
  // Where reading stopped at a record whose header is whole but its data
  // not (yet) there: that record's whole size, header and footer too.
  uint64_t next_record = 0;
};

// The scalars in the whole records at the start of `data`.
TfEventsRead ReadTfEvents(std::string_view data);

// Katib's rule for which scalars are a metric's: the tag starts with the
// metric name's last path segment, and, when the name has a directory
// ("test/accuracy"), the event file's directory (as the container sees
// it) ends with that directory. Samples carry the metric's whole name and
// the event's wall time.
std::vector<MetricSample> MatchTfScalars(const std::vector<std::string>& metric_names,
                                         std::string_view event_dir,
                                         const std::vector<TfScalar>& scalars);

// The record framing, for tests and tools that write event files.
std::string FrameTfRecord(std::string_view data);

}  // namespace trainyard::tune
