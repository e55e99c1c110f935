// The wire format is decoded by hand rather than with libprotobuf: three
// messages and a handful of fields are read, and TensorFlow's .proto files
// would otherwise have to be restated and compiled for them.
#include "tune/tfevents.h"

#include <fmt/format.h>

#include <bit>
#include <boost/crc.hpp>
#include <cmath>
#include <cstring>
#include <optional>

namespace trainyard::tune {
namespace {

// CRC-32C (Castagnoli), masked as TFRecord masks it.
uint32_t MaskedCrc(std::string_view data) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data.data(), data.size());
  uint32_t c = crc.checksum();
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

template <class T>
T LittleEndian(const char* p) {
  static_assert(std::endian::native == std::endian::little, "event files are little-endian");
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// One field of a protocol buffer message.
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t varint = 0;     // wire types 0, 1 and 5 (the raw bits)
  std::string_view bytes;  // wire type 2
};

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  // The next field; nullopt at the end or on malformed input.
  std::optional<Field> Next() {
    if (pos_ >= data_.size()) return std::nullopt;
    std::optional<uint64_t> key = Varint();
    if (!key) return std::nullopt;
    Field f{.number = static_cast<uint32_t>(*key >> 3),
            .wire_type = static_cast<uint32_t>(*key & 7)};
    switch (f.wire_type) {
      case 0: {
        std::optional<uint64_t> v = Varint();
        if (!v) return std::nullopt;
        f.varint = *v;
        return f;
      }
      case 1:
        return Fixed<uint64_t>(f);
      case 5:
        return Fixed<uint32_t>(f);
      case 2: {
        std::optional<uint64_t> length = Varint();
        if (!length || *length > data_.size() - pos_) return std::nullopt;
        f.bytes = data_.substr(pos_, *length);
        pos_ += *length;
        return f;
      }
      default:
        return std::nullopt;  // groups (3, 4) appear in none of these messages
    }
  }

  std::optional<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      auto byte = static_cast<uint8_t>(data_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return std::nullopt;
  }

 private:
  template <class T>
  std::optional<Field> Fixed(Field f) {
    if (data_.size() - pos_ < sizeof(T)) return std::nullopt;
    f.varint = LittleEndian<T>(data_.data() + pos_);
    pos_ += sizeof(T);
    return f;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

// TensorFlow's DataType numbers for the scalar types a summary holds.
enum DataType { kFloat = 1, kDouble = 2, kInt32 = 3, kInt64 = 9 };

float AsFloat(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }
double AsDouble(uint64_t bits) { return std::bit_cast<double>(bits); }

// The values of a repeated numeric field, packed or not.
void Repeated(const Field& f, uint32_t fixed_size, std::vector<uint64_t>& out) {
  if (f.wire_type != 2) {
    out.push_back(f.varint);
    return;
  }
  if (fixed_size == 0) {
    WireReader packed(f.bytes);
    while (std::optional<uint64_t> v = packed.Varint()) out.push_back(*v);
  } else {
    for (size_t i = 0; i + fixed_size <= f.bytes.size(); i += fixed_size) {
      out.push_back(fixed_size == 4 ? LittleEndian<uint32_t>(f.bytes.data() + i)
                                    : LittleEndian<uint64_t>(f.bytes.data() + i));
    }
  }
}

std::string Text(int dtype, uint64_t bits) {
  switch (dtype) {
    case kFloat:
      return fmt::format("{}", AsFloat(bits));
    case kDouble:
      return fmt::format("{}", AsDouble(bits));
    case kInt32:
      return fmt::format("{}", static_cast<int32_t>(bits));
    default:
      return fmt::format("{}", static_cast<int64_t>(bits));
  }
}

// A TensorProto's value when it holds exactly one number.
std::optional<std::string> TensorScalar(std::string_view tensor) {
  int dtype = 0;
  std::string_view content;
  std::vector<uint64_t> values;
  WireReader reader(tensor);
  while (std::optional<Field> f = reader.Next()) {
    switch (f->number) {
      case 1:
        dtype = static_cast<int>(f->varint);
        break;
      case 4:
        content = f->bytes;
        break;
      case 5:  // float_val
        if (dtype == kFloat || dtype == 0) Repeated(*f, 4, values);
        break;
      case 6:  // double_val
        Repeated(*f, 8, values);
        break;
      case 7:   // int_val
      case 10:  // int64_val
        Repeated(*f, 0, values);
        break;
    }
  }
  if (dtype != kFloat && dtype != kDouble && dtype != kInt32 && dtype != kInt64) {
    return std::nullopt;
  }
  size_t width = dtype == kFloat || dtype == kInt32 ? 4 : 8;
  if (!content.empty()) {
    if (content.size() != width) return std::nullopt;
    return Text(dtype, width == 4 ? LittleEndian<uint32_t>(content.data())
                                  : LittleEndian<uint64_t>(content.data()));
  }
  if (values.size() != 1) return std::nullopt;
  return Text(dtype, values[0]);
}

// A Summary.Value's tag and scalar, if it has one.
std::optional<TfScalar> SummaryValue(std::string_view message) {
  TfScalar scalar;
  std::optional<std::string> value;
  WireReader reader(message);
  while (std::optional<Field> f = reader.Next()) {
    if (f->number == 1 && f->wire_type == 2) scalar.tag = f->bytes;
    if (f->number == 2 && f->wire_type == 5) value = Text(kFloat, f->varint);
    if (f->number == 8 && f->wire_type == 2) value = TensorScalar(f->bytes);
  }
  if (!value || scalar.tag.empty()) return std::nullopt;
  scalar.value = std::move(*value);
  return scalar;
}

void ReadEvent(std::string_view event, std::vector<TfScalar>& out) {
  double wall_time = 0;
  int64_t step = 0;
  std::vector<std::string_view> summaries;
  WireReader reader(event);
  while (std::optional<Field> f = reader.Next()) {
    if (f->number == 1 && f->wire_type == 1) wall_time = AsDouble(f->varint);
    if (f->number == 2 && f->wire_type == 0) step = static_cast<int64_t>(f->varint);
    if (f->number == 5 && f->wire_type == 2) summaries.push_back(f->bytes);
  }
  for (std::string_view summary : summaries) {
    WireReader values(summary);
    while (std::optional<Field> f = values.Next()) {
      if (f->number != 1 || f->wire_type != 2) continue;
      if (std::optional<TfScalar> s = SummaryValue(f->bytes)) {
        s->wall_time = wall_time;
        s->step = step;
        out.push_back(std::move(*s));
      }
    }
  }
}

std::string_view LastSegment(std::string_view name) {
  size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

}  // namespace

TfEventsRead ReadTfEvents(std::string_view data) {
  constexpr size_t kHeader = 12, kFooter = 4;
  TfEventsRead read;
  while (data.size() - read.consumed >= kHeader) {
    const char* p = data.data() + read.consumed;
    uint64_t length = LittleEndian<uint64_t>(p);
    if (LittleEndian<uint32_t>(p + 8) != MaskedCrc(std::string_view(p, 8))) {
      read.corrupt = true;
      break;
    }
    size_t available = data.size() - read.consumed;
    if (available < kHeader + kFooter || length > available - kHeader - kFooter) {
      // Still being written, or larger than what was read.
      read.next_record =
          length > UINT64_MAX - kHeader - kFooter ? UINT64_MAX : kHeader + length + kFooter;
      break;
    }
    std::string_view event(p + kHeader, length);
    if (LittleEndian<uint32_t>(p + kHeader + length) != MaskedCrc(event)) {
      read.corrupt = true;
      break;
    }
    ReadEvent(event, read.scalars);
    read.consumed += kHeader + length + kFooter;
  }
  return read;
}

std::vector<MetricSample> MatchTfScalars(const std::vector<std::string>& metric_names,
                                         std::string_view event_dir,
                                         const std::vector<TfScalar>& scalars) {
  std::vector<MetricSample> samples;
  for (const TfScalar& s : scalars) {
    for (const std::string& name : metric_names) {
      size_t slash = name.rfind('/');
      std::string_view dir =
          slash == std::string::npos ? "" : std::string_view(name).substr(0, slash);
      if (!s.tag.starts_with(LastSegment(name)) || !event_dir.ends_with(dir)) continue;
      samples.push_back(
          {.name = name, .value = s.value, .timestamp_us = std::llround(s.wall_time * 1e6)});
    }
  }
  return samples;
}

std::string FrameTfRecord(std::string_view data) {
  std::string out(12, '\0');
  uint64_t length = data.size();
  std::memcpy(out.data(), &length, 8);
  uint32_t length_crc = MaskedCrc(std::string_view(out.data(), 8));
  std::memcpy(out.data() + 8, &length_crc, 4);
  out += data;
  uint32_t data_crc = MaskedCrc(data);
  out.append(reinterpret_cast<const char*>(&data_crc), 4);
  return out;
}

}  // namespace trainyard::tune
