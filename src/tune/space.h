// Search spaces: Katib's parameters as values samplers can work with.
//
// A Point holds one number per parameter, in the Space's order: the value
// itself for int and double parameters (ints are integral doubles), the index
// into `list` for categorical and discrete ones. Points cross the boundary to
// the API as strings (Format/Parse), exactly round-tripping.
//
// Model-based samplers work in the unit cube: ToUnit/FromUnit map each
// numeric parameter through its distribution, so that u uniform in [0, 1)
// gives the parameter's prior:
//   uniform     x uniform in [min, max]
//   logUniform  log x uniform in [log min, log max]           (min > 0)
//   normal      x ~ N((min+max)/2, (max-min)/6), truncated to [min, max]
//   logNormal   log x ~ N of the log bounds, likewise truncated (min > 0)
// Truncation keeps every value inside the bounds the user wrote (hyperopt,
// which Katib uses, lets normal values escape them). A parameter with a
// finite set of values (int, a stepped double, categorical, discrete) maps u
// to one of its k values, each owning an equal share of [0, 1) under the
// uniform prior; ToUnit returns the middle of the value's share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::tune {

enum class ParameterType { kInt, kDouble, kCategorical, kDiscrete };
enum class Distribution { kUniform, kLogUniform, kNormal, kLogNormal };

// One parameter as the Experiment states it (feasibleSpace strings parsed).
struct Parameter {
  std::string name;
  ParameterType type = ParameterType::kDouble;
  Distribution distribution = Distribution::kUniform;
  double min = 0;  // int and double only
  double max = 0;
  std::optional<double> step;     // int and double only; ints default to 1
  std::vector<std::string> list;  // categorical and discrete only
};

// Categorical and discrete parameters: a list of values, not a range.
inline bool IsList(const Parameter& p) {
  return p.type == ParameterType::kCategorical || p.type == ParameterType::kDiscrete;
}

using Point = std::vector<double>;

class Space {
 public:
  // Checks what Katib leaves to the algorithms (its defect: bad bounds fail
  // later, inside a suggestion service): min < max (equal is allowed: one
  // value), positive bounds for log distributions, int bounds and steps that
  // are integers, step > 0, non-empty lists without repeats, unique names.
  // Errors name the parameter: `parameter "lr": min must be less than max`.
  static Result<Space> Make(std::vector<Parameter> parameters);

  size_t size() const { return parameters_.size(); }
  const Parameter& operator[](size_t i) const { return parameters_[i]; }
  const std::vector<Parameter>& parameters() const { return parameters_; }

  // The number of distinct values of parameter i; nullopt for a continuous
  // double (no step).
  std::optional<int64_t> Cardinality(size_t i) const;
  // The number of distinct points; nullopt when any parameter is continuous
  // or the product exceeds 2^62.
  std::optional<int64_t> Size() const;
  // The j-th value of a finite parameter, j in [0, Cardinality(i)): the
  // value itself for numbers (min + j*step, rounded to 15 significant digits
  // so 0.01 + 0.005 prints as 0.015), the index for lists.
  double ValueAt(size_t i, int64_t j) const;
  // The id-th point of a finite space, id in [0, Size()), the first
  // parameter varying slowest (itertools.product's order).
  Point PointAt(int64_t id) const;

  double ToUnit(size_t i, double value) const;
  double FromUnit(size_t i, double u) const;  // u is clamped into [0, 1)
  Point ToUnit(const Point& point) const;
  Point FromUnit(const Point& unit) const;

  // Snaps a value onto the parameter's domain (rounds ints and steps,
  // clamps into the bounds, rounds list indices).
  double Snap(size_t i, double value) const;

  // The parameter's value as Katib writes it: ints as integers, doubles in
  // the shortest form that reads back exactly, list entries verbatim.
  std::string Format(size_t i, double value) const;
  std::vector<std::string> Format(const Point& point) const;
  // The inverse of Format; an error names the parameter and the value.
  Result<double> Parse(size_t i, const std::string& text) const;
  // Values in the Space's order, as Format wrote them.
  Result<Point> Parse(const std::vector<std::string>& values) const;

  // A key equal for equal points: used to refuse duplicates.
  std::string Key(const Point& point) const;

 private:
  explicit Space(std::vector<Parameter> parameters) : parameters_(std::move(parameters)) {}
  std::vector<Parameter> parameters_;
};

}  // namespace trainyard::tune
