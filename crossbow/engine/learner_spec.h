#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crossbow/core/context.h"
#include "crossbow/core/net_def.h"
#include "crossbow/core/tensor.h"

namespace crossbow {

// Each learner's optimiser (docs/design/engine.md, "Optimisers"): momentum SGD (MomentumSGD,
// in the caffe2 or the pytorch convention), AdamW or RAdam (AdamW, decoupled weight decay), any
// of them wrapped by Lookahead when lookahead_k > 0.
struct SolverConfig {
  std::string type = "sgd";  // sgd | adamw | radam
  double lr = 0.1;
  double momentum = 0.9;  // sgd
  double weight_decay = 0.0;
  bool nesterov = false;                          // sgd
  std::string momentum_convention = "caffe2";     // sgd: caffe2 | pytorch
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adamw, radam
  // radam: where eps goes, "raw" (to sqrt(v): PyTorch's) or "corrected" (to sqrt(v / (1 -
  // beta2^t)), as AdamW's: fastai's); operators/adam_step.h.
  std::string radam_eps = "raw";
  int64_t lookahead_k = 0;  // 0: no Lookahead
  double lookahead_alpha = 0.5;
  // false: no weight decay on 1-D parameters (biases, batch-norm scales and shifts).
  bool bias_decay = true;
};

// The solver types, as --optimizer names them; RAdam's eps placements, as --radam-eps.
std::vector<std::string> SolverTypes();
std::vector<std::string> RadamEpsPlacements();

// What the Python builder sends to make a learner (python/crossbow/builder.py writes it).
struct LearnerSpec {
  std::string name;
  // Where the net came from (a zoo name, FILE.py:FUNCTION or MODULE:FUNCTION), kept in
  // checkpoints for `crossbow eval` and `export`; "" where the spec's maker did not say.
  std::string source;
  NetDef init_net;  // fillers for every parameter and state blob
  NetDef net;       // forward: input -> loss and output
  std::string input = "data", label = "label", loss = "loss", output = "prob";
  Shape input_shape;  // one example: C, H, W
  std::vector<std::string> accuracy, params, state;
  SolverConfig solver;
  uint64_t seed = 0;
  int threads = 1;  // CPU threads of the learner's kernels
  Device device;    // where the learner runs: the CPU or one GPU
  // Of the convolutions (core/precision.h); the engine sets its learners' from
  // EngineOptions::precision.
  Precision precision = Precision::kFP32;
  // On a GPU, each slice of a plan (forward+backward, update) is recorded as a CUDA graph once
  // its shapes and memory are known, and replayed; false runs operator by operator.
  bool cuda_graphs = true;
  // Intermediate blobs share buffers by liveness after the first run (core/memory_planner.h);
  // false gives each its own buffer: the reference that tests compare a planned learner with.
  bool plan_memory = true;

  static LearnerSpec FromJson(const std::string& json);
};

}  // namespace crossbow
