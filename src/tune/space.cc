#include "tune/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "tune/normal.h"

namespace trainyard::tune {
namespace {

bool IsLog(const Parameter& p) {
  return p.distribution == Distribution::kLogUniform || p.distribution == Distribution::kLogNormal;
}

bool IsNormal(const Parameter& p) {
  return p.distribution == Distribution::kNormal || p.distribution == Distribution::kLogNormal;
}

// 15 significant digits: min + j*step prints as the user would write it.
double RoundTo15Digits(double v) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::general, 15);
  double out = v;
  std::from_chars(buffer, end, out);
  return out;
}

std::optional<double> StepOf(const Parameter& p) {
  if (p.step) return p.step;
  if (p.type == ParameterType::kInt) return 1.0;
  return std::nullopt;
}

double Transform(const Parameter& p, double x) { return IsLog(p) ? std::log(x) : x; }
double Untransform(const Parameter& p, double t) { return IsLog(p) ? std::exp(t) : t; }

Status Invalid(const Parameter& p, const std::string& what) {
  return InvalidArgumentError(fmt::format("parameter \"{}\": {}", p.name, what));
}

bool IsInteger(double v) { return std::isfinite(v) && std::floor(v) == v; }

Status CheckNumeric(const Parameter& p) {
  if (!std::isfinite(p.min) || !std::isfinite(p.max))
    return Invalid(p, "min and max must be finite");
  if (p.min > p.max) {
    return Invalid(p, fmt::format("min ({}) must not be greater than max ({})", p.min, p.max));
  }
  if (IsLog(p) && p.min <= 0) {
    return Invalid(p,
                   fmt::format("min must be greater than 0 for a log distribution, not {}", p.min));
  }
  if (p.step && !(std::isfinite(*p.step) && *p.step > 0)) {
    return Invalid(p, fmt::format("step must be greater than 0, not {}", *p.step));
  }
  if (p.type == ParameterType::kInt) {
    if (!IsInteger(p.min) || !IsInteger(p.max)) return Invalid(p, "min and max must be integers");
    if (p.step && !IsInteger(*p.step)) return Invalid(p, "step must be an integer");
  }
  return OkStatus();
}

Status CheckList(const Parameter& p) {
  if (p.list.empty()) return Invalid(p, "list must not be empty");
  std::set<std::string> seen;
  for (const std::string& v : p.list) {
    if (!seen.insert(v).second) return Invalid(p, fmt::format("list has \"{}\" twice", v));
  }
  return OkStatus();
}

}  // namespace

Result<Space> Space::Make(std::vector<Parameter> parameters) {
  std::set<std::string> names;
  for (const Parameter& p : parameters) {
    if (p.name.empty()) return InvalidArgumentError("a parameter has no name");
    if (!names.insert(p.name).second) return Invalid(p, "the name is used twice");
    RETURN_IF_ERROR(IsList(p) ? CheckList(p) : CheckNumeric(p));
  }
  return Space(std::move(parameters));
}

std::optional<int64_t> Space::Cardinality(size_t i) const {
  const Parameter& p = parameters_[i];
  if (IsList(p)) return static_cast<int64_t>(p.list.size());
  std::optional<double> step = StepOf(p);
  if (!step) return std::nullopt;
  // The tolerance keeps 0.01..0.05 by 0.005 at 9 values despite rounding.
  double count = std::floor((p.max - p.min) / *step + 1e-9) + 1;
  if (count > 4e18) return std::nullopt;
  return static_cast<int64_t>(count);
}

std::optional<int64_t> Space::Size() const {
  int64_t total = 1;
  for (size_t i = 0; i < size(); ++i) {
    std::optional<int64_t> k = Cardinality(i);
    if (!k) return std::nullopt;
    if (total > (int64_t{1} << 62) / *k) return std::nullopt;
    total *= *k;
  }
  return total;
}

double Space::ValueAt(size_t i, int64_t j) const {
  const Parameter& p = parameters_[i];
  if (IsList(p)) return static_cast<double>(j);
  return RoundTo15Digits(p.min + static_cast<double>(j) * *StepOf(p));
}

Point Space::PointAt(int64_t id) const {
  Point point(parameters_.size());
  for (size_t i = parameters_.size(); i-- > 0;) {
    int64_t k = *Cardinality(i);
    point[i] = ValueAt(i, id % k);
    id /= k;
  }
  return point;
}

namespace {

// The parameter's range in transformed space: a finite numeric parameter's
// range reaches half a step past each end, so each value owns an equal share.
struct Range {
  double low;
  double high;
};

Range TransformedRange(const Parameter& p, std::optional<int64_t> cardinality) {
  double low = p.min;
  double high = p.max;
  if (cardinality) {
    double half = *StepOf(p) / 2;
    high = p.min + static_cast<double>(*cardinality - 1) * *StepOf(p) + half;
    if (!IsLog(p) || p.min - half > 0) low = p.min - half;
  }
  return {Transform(p, low), Transform(p, high)};
}

// The normal prior in transformed space: centred, (max - min) / 6 wide.
struct Prior {
  double mu;
  double sigma;
};

Prior NormalPrior(const Parameter& p) {
  double low = Transform(p, p.min);
  double high = Transform(p, p.max);
  return {(low + high) / 2, std::max((high - low) / 6, 1e-300)};
}

}  // namespace

double Space::FromUnit(size_t i, double u) const {
  const Parameter& p = parameters_[i];
  u = std::clamp(u, 0.0, std::nextafter(1.0, 0.0));
  std::optional<int64_t> k = Cardinality(i);
  if (IsList(p)) return std::floor(u * static_cast<double>(*k));
  Range r = TransformedRange(p, k);
  double t;
  if (IsNormal(p)) {
    Prior prior = NormalPrior(p);
    double c_low = NormalCdf((r.low - prior.mu) / prior.sigma);
    double c_high = NormalCdf((r.high - prior.mu) / prior.sigma);
    t = prior.mu + prior.sigma * NormalQuantile(c_low + u * (c_high - c_low));
  } else {
    t = r.low + u * (r.high - r.low);
  }
  return Snap(i, Untransform(p, std::clamp(t, r.low, r.high)));
}

double Space::ToUnit(size_t i, double value) const {
  const Parameter& p = parameters_[i];
  std::optional<int64_t> k = Cardinality(i);
  if (IsList(p)) return (value + 0.5) / static_cast<double>(*k);
  Range r = TransformedRange(p, k);
  if (r.high <= r.low) return 0.5;
  double t = Transform(p, value);
  double u;
  if (IsNormal(p)) {
    Prior prior = NormalPrior(p);
    double c_low = NormalCdf((r.low - prior.mu) / prior.sigma);
    double c_high = NormalCdf((r.high - prior.mu) / prior.sigma);
    u = (NormalCdf((t - prior.mu) / prior.sigma) - c_low) / (c_high - c_low);
  } else {
    u = (t - r.low) / (r.high - r.low);
  }
  return std::clamp(u, 0.0, 1.0);
}

Point Space::ToUnit(const Point& point) const {
  Point unit(point.size());
  for (size_t i = 0; i < point.size(); ++i) unit[i] = ToUnit(i, point[i]);
  return unit;
}

Point Space::FromUnit(const Point& unit) const {
  Point point(unit.size());
  for (size_t i = 0; i < unit.size(); ++i) point[i] = FromUnit(i, unit[i]);
  return point;
}

double Space::Snap(size_t i, double value) const {
  const Parameter& p = parameters_[i];
  std::optional<int64_t> k = Cardinality(i);
  if (IsList(p)) return std::clamp(std::round(value), 0.0, static_cast<double>(*k - 1));
  if (!k) return std::clamp(value, p.min, p.max);
  double j = std::round((value - p.min) / *StepOf(p));
  return ValueAt(i, static_cast<int64_t>(std::clamp(j, 0.0, static_cast<double>(*k - 1))));
}

std::string Space::Format(size_t i, double value) const {
  const Parameter& p = parameters_[i];
  if (IsList(p)) return p.list[static_cast<size_t>(value)];
  if (p.type == ParameterType::kInt) return fmt::format("{}", static_cast<int64_t>(value));
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::vector<std::string> Space::Format(const Point& point) const {
  std::vector<std::string> out;
  out.reserve(point.size());
  for (size_t i = 0; i < point.size(); ++i) out.push_back(Format(i, point[i]));
  return out;
}

Result<double> Space::Parse(size_t i, const std::string& text) const {
  const Parameter& p = parameters_[i];
  if (IsList(p)) {
    auto it = std::find(p.list.begin(), p.list.end(), text);
    if (it == p.list.end()) {
      return Invalid(p, fmt::format("\"{}\" is not one of its list", text));
    }
    return static_cast<double>(it - p.list.begin());
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return Invalid(p, fmt::format("\"{}\" is not a number", text));
  }
  if (p.type == ParameterType::kInt && !IsInteger(value)) {
    return Invalid(p, fmt::format("\"{}\" is not an integer", text));
  }
  return value;
}

Result<Point> Space::Parse(const std::vector<std::string>& values) const {
  if (values.size() != size()) {
    return InvalidArgumentError(fmt::format("{} values for {} parameters", values.size(), size()));
  }
  Point point(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSIGN_OR_RETURN(point[i], Parse(i, values[i]));
  }
  return point;
}

std::string Space::Key(const Point& point) const {
  // The values' bits: Format is exact (equal text iff equal doubles), so
  // this is the same equality without formatting, which samplers pay for
  // every trial on every call. -0 and 0 are one value.
  std::string key(point.size() * sizeof(double), '\0');
  for (size_t i = 0; i < point.size(); ++i) {
    double v = point[i] == 0 ? 0.0 : point[i];
    std::memcpy(key.data() + i * sizeof(double), &v, sizeof(double));
  }
  return key;
}

}  // namespace trainyard::tune
