#include "tune/metrics.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

namespace trainyard::tune {
namespace {

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n\v\f";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

bool Digits(std::string_view s, size_t pos, size_t count, int& out) {
  if (pos + count > s.size()) return false;
  out = 0;
  for (size_t k = pos; k < pos + count; ++k) {
    if (s[k] < '0' || s[k] > '9') return false;
    out = out * 10 + (s[k] - '0');
  }
  return true;
}

// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<int64_t> ParseRfc3339Nanos(std::string_view s) {
  int year, month, day, hour, minute, second;
  if (!Digits(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, month) ||
      s[7] != '-' || !Digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, hour) || s[13] != ':' || !Digits(s, 14, 2, minute) || s[16] != ':' ||
      !Digits(s, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    size_t digits = 0;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits) {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (size_t k = digits; k < 9; ++k) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_seconds = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  // int64 nanoseconds reach only the years 1678 to 2262; a time outside them is refused rather
  // than wrapped into a wrong one.
  int64_t result;
  if (__builtin_mul_overflow(seconds, int64_t{1'000'000'000}, &result) ||
      __builtin_add_overflow(result, nanos, &result)) {
    return std::nullopt;
  }
  return result;
}

std::optional<int64_t> ParseRfc3339Micros(std::string_view s) {
  std::optional<int64_t> nanos = ParseRfc3339Nanos(s);
  if (!nanos) return std::nullopt;
  return *nanos / 1000;
}

struct MetricsParser::Impl {
  std::vector<std::string> names;
  std::vector<std::unique_ptr<RE2>> filters;
  MetricsFormat format;

  // No names: any, whose value is a number (a job's own metrics, which
  // no objective names in advance).
  bool IsMetric(std::string_view name, std::string_view value) const {
    if (names.empty()) return !name.empty() && ParseMetricValue(value).has_value();
    return std::find(names.begin(), names.end(), name) != names.end();
  }

  std::vector<MetricSample> ParseText(std::string_view line) const;
  std::vector<MetricSample> ParseJson(std::string_view line) const;
};

std::vector<MetricSample> MetricsParser::Impl::ParseText(std::string_view line) const {
  std::vector<MetricSample> samples;
  bool mentions = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return line.find(name) != std::string_view::npos;
  });
  if (!mentions && !names.empty()) return samples;
  std::optional<int64_t> timestamp = ParseRfc3339Micros(line.substr(0, line.find(' ')));
  for (const std::unique_ptr<RE2>& filter : filters) {
    re2::StringPiece input(line.data(), line.size());
    re2::StringPiece groups[3];
    size_t pos = 0;
    while (pos <= line.size() &&
           filter->Match(input, pos, line.size(), RE2::UNANCHORED, groups, 3)) {
      std::string_view name = Trim(std::string_view(groups[1].data(), groups[1].size()));
      std::string_view value = Trim(std::string_view(groups[2].data(), groups[2].size()));
      if (IsMetric(name, value)) {
        samples.push_back({std::string(name), std::string(value), timestamp});
      }
      // Go's FindAll: the next match starts after this one; an empty match
      // moves on by one character.
      size_t end = static_cast<size_t>(groups[0].data() - line.data()) + groups[0].size();
      pos = groups[0].empty() ? end + 1 : end;
    }
  }
  return samples;
}

std::vector<MetricSample> MetricsParser::Impl::ParseJson(std::string_view line) const {
  std::vector<MetricSample> samples;
  nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return samples;
  std::optional<int64_t> timestamp;
  if (auto it = object.find("timestamp"); it != object.end()) {
    if (it->is_string()) timestamp = ParseRfc3339Micros(it->get<std::string>());
    if (it->is_number()) timestamp = std::llround(it->get<double>() * 1e6);
  }
  for (const std::string& name : names) {
    auto it = object.find(name);
    if (it == object.end()) continue;
    // Katib reads strings only (its issue #2162); numbers are what people
    // write, so trainyard takes both.
    if (it->is_string()) {
      samples.push_back({name, std::string(Trim(it->get<std::string>())), timestamp});
    } else if (it->is_number()) {
      samples.push_back({name, fmt::format("{}", it->get<double>()), timestamp});
    }
  }
  return samples;
}

Result<MetricsParser> MetricsParser::Make(std::vector<std::string> metric_names,
                                          std::vector<std::string> filters, MetricsFormat format) {
  auto impl = std::make_unique<Impl>();
  impl->names = std::move(metric_names);
  impl->format = format;
  if (filters.empty()) filters.emplace_back(kDefaultMetricFilter);
  for (const std::string& filter : filters) {
    RETURN_IF_ERROR(ValidateMetricFilter(filter));
    impl->filters.push_back(std::make_unique<RE2>(filter));
  }
  return MetricsParser(std::move(impl));
}

MetricsParser::MetricsParser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsParser::~MetricsParser() = default;
MetricsParser::MetricsParser(MetricsParser&&) noexcept = default;
MetricsParser& MetricsParser::operator=(MetricsParser&&) noexcept = default;

std::vector<MetricSample> MetricsParser::ParseLine(std::string_view line) const {
  return impl_->format == MetricsFormat::kJson ? impl_->ParseJson(line) : impl_->ParseText(line);
}

Status ValidateMetricFilter(std::string_view filter) {
  RE2 re(filter, RE2::Quiet);
  if (!re.ok()) return InvalidArgumentError(fmt::format("invalid filter: {}", re.error()));
  if (re.NumberOfCapturingGroups() < 2) {
    return InvalidArgumentError("two top subexpressions are required");
  }
  return OkStatus();
}

std::optional<double> ParseMetricValue(std::string_view value) {
  value = Trim(value);
  if (!value.empty() && value.front() == '+') value.remove_prefix(1);
  double out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(out)) {
    return std::nullopt;
  }
  return out;
}

MetricSummary Summarize(std::string_view name, const std::vector<TimedSample>& samples) {
  MetricSummary summary{.name = std::string(name)};
  std::optional<double> min;
  std::optional<double> max;
  std::optional<int64_t> latest_at;
  for (const TimedSample& s : samples) {
    if (s.name != name) continue;
    if (!latest_at || s.timestamp_us >= *latest_at) {
      latest_at = s.timestamp_us;
      summary.latest = s.value;
    }
    std::optional<double> v = ParseMetricValue(s.value);
    if (!v) continue;
    if (!min || *v < *min) {
      min = v;
      summary.min = s.value;
    }
    if (!max || *v > *max) {
      max = v;
      summary.max = s.value;
    }
  }
  return summary;
}

std::optional<double> ObjectiveValue(const MetricSummary& summary, MetricStrategy strategy) {
  const std::string* pick = &summary.latest;
  if (strategy == MetricStrategy::kMin && summary.min != "unavailable") pick = &summary.min;
  if (strategy == MetricStrategy::kMax && summary.max != "unavailable") pick = &summary.max;
  return ParseMetricValue(*pick);
}

}  // namespace trainyard::tune
