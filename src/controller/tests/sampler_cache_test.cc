#include "controller/sampler_cache.h"

#include <gtest/gtest.h>

namespace trainyard::controller {
namespace {

class CountedSampler final : public tune::Sampler {
 public:
  explicit CountedSampler(bool keep) : keep_(keep) {}
  Result<tune::SuggestResult> Suggest(std::span<const tune::TrialRecord>, int) override {
    return tune::SuggestResult{};
  }
  bool worth_keeping() const override { return keep_; }

 private:
  bool keep_;
};

struct Maker {
  bool keep = true;
  int made = 0;
  SamplerCache::Make operator()() {
    return [this]() -> Result<std::unique_ptr<tune::Sampler>> {
      ++made;
      return std::unique_ptr<tune::Sampler>(std::make_unique<CountedSampler>(keep));
    };
  }
};

TEST(SamplerCacheTest, KeepsASamplerWorthKeepingWhileItsRecipeStays) {
  SamplerCache cache;
  Maker maker;
  auto first = cache.Get("uid-1", "spec-a", maker());
  auto again = cache.Get("uid-1", "spec-a", maker());
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->get(), again->get());
  EXPECT_EQ(maker.made, 1);
  // Another recipe (the spec changed): made anew, and kept in its place.
  auto changed = cache.Get("uid-1", "spec-b", maker());
  EXPECT_NE(changed->get(), first->get());
  EXPECT_EQ(maker.made, 2);
  EXPECT_EQ(cache.size(), 1u);
  // Another owner has its own.
  EXPECT_NE(cache.Get("uid-2", "spec-b", maker())->get(), changed->get());
  EXPECT_EQ(maker.made, 3);
}

TEST(SamplerCacheTest, ASamplerNotWorthKeepingIsMadeEachTime) {
  SamplerCache cache;
  Maker maker{.keep = false};
  EXPECT_TRUE(cache.Get("uid-1", "spec", maker()).ok());
  EXPECT_TRUE(cache.Get("uid-1", "spec", maker()).ok());
  EXPECT_EQ(maker.made, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(SamplerCacheTest, TheLeastRecentlyUsedGoesPastTheBound) {
  SamplerCache cache(2);
  Maker maker;
  ASSERT_TRUE(cache.Get("a", "r", maker()).ok());
  ASSERT_TRUE(cache.Get("b", "r", maker()).ok());
  ASSERT_TRUE(cache.Get("a", "r", maker()).ok());  // a is used again: b is the oldest
  ASSERT_TRUE(cache.Get("c", "r", maker()).ok());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(maker.made, 3);
  ASSERT_TRUE(cache.Get("a", "r", maker()).ok());
  EXPECT_EQ(maker.made, 3);  // a was kept
  ASSERT_TRUE(cache.Get("b", "r", maker()).ok());
  EXPECT_EQ(maker.made, 4);  // b was not
}

// As the controllers make them: MakeSampler's GP (behind the wrapper that
// keeps suggestions distinct) is kept; random search is made each time.
TEST(SamplerCacheTest, TheControllersGpSamplerIsKeptAndRandomSearchIsNot) {
  Result<tune::Space> space =
      tune::Space::Make({{.name = "x", .type = tune::ParameterType::kDouble, .min = 0, .max = 1}});
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  SamplerCache cache;
  for (const char* algorithm : {"bayesianoptimization", "random"}) {
    auto make = [&] { return tune::MakeSampler(*space, {.algorithm = algorithm}); };
    auto first = cache.Get(algorithm, "spec", make);
    auto again = cache.Get(algorithm, "spec", make);
    ASSERT_TRUE(first.ok() && again.ok()) << algorithm;
    EXPECT_EQ(first->get() == again->get(), std::string(algorithm) == "bayesianoptimization")
        << algorithm;
  }
}

TEST(SamplerCacheTest, AFailureToMakeIsReturnedAndNothingIsKept) {
  SamplerCache cache;
  auto failed = cache.Get("uid-1", "spec", []() -> Result<std::unique_ptr<tune::Sampler>> {
    return InvalidArgumentError("unknown setting foo");
  });
  EXPECT_EQ(failed.status().message(), "unknown setting foo");
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace trainyard::controller
