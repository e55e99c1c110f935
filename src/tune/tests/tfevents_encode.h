// Event files encoded field by field, as TensorFlow and tensorboardX write
// them, for tests of what reads them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tune/tfevents.h"

namespace trainyard::tune {

inline std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out += static_cast<char>(byte | (v != 0 ? 0x80 : 0));
  } while (v != 0);
  return out;
}
inline std::string Key(int number, int wire_type) { return Varint((number << 3) | wire_type); }
inline std::string Bytes(int number, std::string_view data) {
  return Key(number, 2) + Varint(data.size()) + std::string(data);
}
template <class T>
inline std::string Raw(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

// tf.compat.v1.summary / tensorboardX: Summary.Value{tag, simple_value}.
inline std::string SimpleValue(std::string_view tag, float value) {
  return Bytes(1, tag) + Key(2, 5) + Raw(value);
}
// TF2's tf.summary.scalar: Summary.Value{tag, tensor{dtype, float_val or content}}.
inline std::string FloatTensor(std::string_view tag, float value, bool as_content) {
  std::string tensor = Key(1, 0) + Varint(1) + Bytes(2, "");
  tensor += as_content ? Bytes(4, Raw(value)) : Bytes(5, Raw(value));
  return Bytes(1, tag) + Bytes(8, tensor);
}
inline std::string DoubleTensor(std::string_view tag, double value) {
  std::string tensor = Key(1, 0) + Varint(2) + Bytes(6, Raw(value));
  return Bytes(1, tag) + Bytes(8, tensor);
}
inline std::string Event(double wall_time, int64_t step, const std::vector<std::string>& values) {
  std::string summary;
  for (const std::string& v : values) summary += Bytes(1, v);
  return FrameTfRecord(Key(1, 1) + Raw(wall_time) + Key(2, 0) + Varint(step) + Bytes(5, summary));
}
// The first record of every file: file_version, no summary.
inline std::string VersionEvent() {
  return FrameTfRecord(Key(1, 1) + Raw(1.7e9) + Bytes(3, "brain.Event:2"));
}

}  // namespace trainyard::tune
