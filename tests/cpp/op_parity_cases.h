#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "crossbow/core/net_def.h"
#include "crossbow/core/tensor.h"
#include "tests/cpp/op_test_util.h"

// The table of the CPU/CUDA parity test (op_parity_cuda_test.cc): one or more configurations
// per operator type. A type is covered by a case of its own or as a gradient operator of a
// case's backward pass; op_parity_cases_test.cc fails when a CPU operator is not covered, so
// that a new operator comes with its parity case.
namespace crossbow::testing {

// One input of a case: uniform floats in [low, high), or int32 labels in [0, classes).
struct ParityInput {
  Shape shape;
  float low = -1.f, high = 1.f;
  int32_t classes = 0;  // > 0: labels
};

enum class ParityCheck {
  kValues,   // outputs and gradients agree between the devices (relative error < 1e-4)
  kDropout,  // random mask: keep rate, Y = X * mask / (1 - ratio), dX from the mask
  kFill,     // random values: range, mean and standard deviation of the distribution
};

struct ParityCase {
  std::string name;  // unique, letters, digits and '_': the test's parameter name
  OperatorDef op;
  std::vector<ParityInput> inputs;      // one per op input
  std::vector<int> grad_inputs;         // inputs whose gradients are compared; none: forward only
  std::vector<int> grad_outputs = {0};  // outputs that receive a random gradient
  std::vector<int> device_specific_outputs;  // not compared (MaxPool's workspace)
  ParityCheck check = ParityCheck::kValues;
};

const std::vector<ParityCase>& ParityCases();
// GoogleTest prints a case by its name.
void PrintTo(const ParityCase& c, std::ostream* out);

// The backward pass of `c` from its registered gradient maker: output o's gradient is named
// "<output>_outgrad", input i's "<input>_grad". Empty when the case has no grad_inputs.
std::vector<OperatorDef> ParityGradientOps(const ParityCase& c);
// Feeds the case's inputs into `h`, random from h's generator (labels from a fixed seed).
void FeedParityInputs(const ParityCase& c, OpHarness& h);
// After the forward run: feeds a random gradient, shaped like the output, for each of
// c.grad_outputs.
void FeedParityOutputGradients(const ParityCase& c, OpHarness& h);
// Every operator type the table runs: the cases' own and their gradient operators'.
std::set<std::string> ParityCoveredTypes();

}  // namespace crossbow::testing
