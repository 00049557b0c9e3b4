// A multi-rank checkpoint gathered on rank 0: every rank's learners, and only of one iteration.
#include "crossbow/train/trainer_ranks.h"

#include <gtest/gtest.h>

#include "crossbow/core/serialize.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

using std::chrono::milliseconds;

// Rank `rank` of a job of two, whose other rank sends `theirs` to the gather; keeps what this
// rank sent.
class RankOfTwo final : public ProcessGroup {
 public:
  RankOfTwo(int rank, std::string theirs) : rank_(rank), theirs_(std::move(theirs)) {}
  int size() const override { return 2; }
  int rank() const override { return rank_; }
  void AllReduceSum(int, float*, size_t, ContextBase*, milliseconds) override {}
  void Abort(const std::string&) override {}
  std::vector<std::string> AllGather(const std::string&, milliseconds) override { return {}; }
  std::vector<std::string> Gather(const std::string& bytes, int, milliseconds) override {
    sent = bytes;
    if (rank_ != 0) return {};
    return {bytes, theirs_};
  }
  std::string sent;

 private:
  int rank_;
  std::string theirs_;
};

Tensor Scalar(float value) {
  Tensor t({1}, DataType::kFloat32);
  *t.mutable_data<float>() = value;
  return t;
}

// What rank 1 sends for its learner1 at `iteration` (its own GatherStateTensors).
std::string RankOnesPart(int64_t iteration, const Tensor& w) {
  RankOfTwo one(1, "");
  std::vector<std::map<std::string, Tensor>> received;
  EXPECT_TRUE(GatherStateTensors(one, {{"learner1/w", &w}, {"z/w", &w}}, iteration, &received,
                                 milliseconds(100))
                  .empty());
  return one.sent;
}

TEST(GatherStateTensors, RankZeroHoldsEveryRanksLearnersOfOneIteration) {
  const Tensor z = Scalar(1), mine = Scalar(2), theirs = Scalar(3);
  RankOfTwo group(0, RankOnesPart(40, theirs));
  std::vector<std::map<std::string, Tensor>> received;
  const auto all = GatherStateTensors(group, {{"z/w", &z}, {"learner0/w", &mine}}, 40, &received,
                                      milliseconds(100));
  std::map<std::string, float> values;
  for (const auto& [name, tensor] : all) values[name] = *tensor->data<float>();
  EXPECT_EQ(values,
            (std::map<std::string, float>{{"z/w", 1}, {"learner0/w", 2}, {"learner1/w", 3}}));
}

TEST(GatherStateTensors, RefusesARankAtAnotherIteration) {
  const Tensor z = Scalar(1), theirs = Scalar(3);
  RankOfTwo group(0, RankOnesPart(41, theirs));
  std::vector<std::map<std::string, Tensor>> received;
  EXPECT_ERROR(GatherStateTensors(group, {{"z/w", &z}}, 40, &received, milliseconds(100)), Error,
               "rank 1 is at iteration 41, rank 0 at 40: no checkpoint written");
}

}  // namespace
}  // namespace crossbow
