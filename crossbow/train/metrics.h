#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "crossbow/core/console.h"
#include "crossbow/engine/learner.h"

namespace crossbow {

// One line of the metrics file: a training record every few iterations, and one with the test
// results after each evaluation of the average model.
struct MetricsRecord {
  int64_t iteration = 0;
  double epoch = 0;   // fractional: images seen / epoch size
  double time_s = 0;  // training time since the start of the run (across resumes)
  double loss = 0;    // mean over learners and over the iterations since the last record
  double lr = 0;
  double images_per_s = 0;
  int learners_per_device = 0;
  std::vector<double> distances;  // each learner's ||w_j - z||
  std::optional<EvalResult> test;
};

std::string ToJson(const MetricsRecord& record);

// Writes JSON lines to a file. A new run starts the file anew; a run resumed from the checkpoint
// of iteration `resumed_at` keeps the records up to it and appends, so that the file holds one
// history: records written after that checkpoint, by a run stopped before it wrote the next,
// describe iterations the resumed run trains again, and are dropped (the file is rewritten
// atomically), as is a line torn by a crash.
class MetricsLog {
 public:
  MetricsLog(const std::string& path, std::optional<int64_t> resumed_at);
  void Write(const MetricsRecord& record);

 private:
  std::string path_;
  std::ofstream out_;
};

// The run's progress for people: "epoch 3/10 [####.....]  42.0% 1234 img/s ETA 1m05s loss 1.23"
// (the fraction is of the run, the rate and loss of the epoch so far). On a terminal it is the
// console's status line, redrawn at most ten times a second; elsewhere a plain line every tenth
// of the run or every minute, whichever comes first.
class ProgressBar {
 public:
  explicit ProgressBar(Console* console = &Console::Get());
  void Update(const std::string& label, double fraction, double images_per_s, double eta_s,
              double loss);
  void Finish();  // keeps the last status line

 private:
  using Clock = std::chrono::steady_clock;
  Console* console_;
  Clock::time_point last_draw_{}, last_line_;
  double last_line_fraction_ = 0;
  bool drawn_ = false;
};

std::string FormatDuration(double seconds);  // "1h02m", "3m05s", "12.3s"

// The per-epoch log line.
std::string EpochLine(int64_t epoch, int64_t epochs, const MetricsRecord& record);

}  // namespace crossbow
