#include "crossbow/train/metrics.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

MetricsRecord Sample() {
  MetricsRecord r;
  r.iteration = 120;
  r.epoch = 2.5;
  r.time_s = 75;
  r.loss = 0.75;
  r.lr = 0.01;
  r.images_per_s = 800;
  r.learners_per_device = 3;
  r.distances = {0.5, 0.25, 0.125};
  return r;
}

TEST(Metrics, JsonLinesCarryEveryField) {
  const std::string path = ScratchDir("metrics") + "/metrics.jsonl";
  MetricsRecord with_test = Sample();
  with_test.test = EvalResult{1.5, 0.625, 0.875};
  MetricsRecord diverged = Sample();
  diverged.loss = NAN;
  {
    MetricsLog log(path, std::nullopt);
    log.Write(Sample());
    log.Write(with_test);
  }
  MetricsLog(path, 120).Write(diverged);  // appending, as a run resumed at iteration 120 does
  std::ifstream in(path);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["iteration"], 120);
  EXPECT_EQ(lines[0]["epoch"], 2.5);
  EXPECT_EQ(lines[0]["time"], 75.0);
  EXPECT_EQ(lines[0]["lr"], 0.01);
  EXPECT_EQ(lines[0]["images_per_s"], 800.0);
  EXPECT_EQ(lines[0]["learners_per_device"], 3);
  EXPECT_EQ(lines[0]["distance_to_z"], (std::vector<double>{0.5, 0.25, 0.125}));
  EXPECT_FALSE(lines[0].contains("accuracy"));
  EXPECT_EQ(lines[1]["accuracy"], 0.625);
  EXPECT_EQ(lines[1]["top5"], 0.875);
  EXPECT_EQ(lines[1]["test_loss"], 1.5);
  EXPECT_TRUE(lines[2]["loss"].is_null());
  std::filesystem::remove(path);
}

std::vector<int64_t> Iterations(const std::string& path) {
  std::ifstream in(path);
  std::vector<int64_t> iterations;
  for (std::string line; std::getline(in, line);) {
    iterations.push_back(nlohmann::json::parse(line)["iteration"]);
  }
  return iterations;
}

// A run stopped after iteration 40 that last checkpointed at 20 is resumed from 20: the records
// of 30 and 40 describe a history the resumed run replaces, and a crash's torn line goes too.
TEST(Metrics, AResumedRunKeepsTheRecordsUpToItsCheckpoint) {
  const std::string path = ScratchDir("metrics") + "/resumed.jsonl";
  MetricsRecord r = Sample();
  {
    MetricsLog log(path, std::nullopt);
    for (int64_t i : {10, 20, 30, 40}) {
      r.iteration = i;
      log.Write(r);
    }
  }
  std::ofstream(path, std::ios::app) << "{\"iteration\": 50, \"ep";
  r.iteration = 30;
  MetricsLog(path, 20).Write(r);
  EXPECT_EQ(Iterations(path), (std::vector<int64_t>{10, 20, 30}));

  // A resume at the last record leaves the file as it was, in place.
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  r.iteration = 40;
  MetricsLog(path, 30).Write(r);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(Iterations(path), (std::vector<int64_t>{10, 20, 30, 40}));
  std::filesystem::remove(path);
}

TEST(Metrics, UnwritablePathIsAClearError) {
  try {
    MetricsLog log("/nonexistent-dir/metrics.jsonl", std::nullopt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/metrics.jsonl"), std::string::npos);
  }
}

// What a Console wrote to its file.
std::string Written(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text.push_back(static_cast<char>(c));
  return text;
}

TEST(Metrics, ProgressBarOnATerminalIsOneStatusLineThatLogLinesDoNotBreak) {
  std::FILE* file = std::tmpfile();
  Console console(file, /*terminal=*/true);
  ProgressBar bar(&console);
  bar.Update("epoch 1/4", 0.5, 1234, 65, 0.5);
  bar.Update("epoch 1/4", 0.6, 1234, 60, 0.5);  // within 0.1 s: not redrawn
  console.Line("a log line");
  bar.Finish();
  const std::string status =
      "epoch 1/4 [############............]  50.0%    1234 img/s ETA 1m05s loss 0.5000";
  EXPECT_EQ(Written(file), status + "\r\x1b[Ka log line\n" + status + "\n");
  std::fclose(file);
}

TEST(Metrics, ProgressBarInALogFileWritesPlainLinesEveryTenthOfTheRun) {
  std::FILE* file = std::tmpfile();
  Console console(file, /*terminal=*/false);
  ProgressBar bar(&console);
  for (int i = 1; i <= 100; ++i) bar.Update("epoch 1/1", i / 100.0, 100, 1, 0.25);
  bar.Finish();
  const std::string text = Written(file);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10) << text;
  EXPECT_EQ(text.find("epoch 1/1 [##"), 0u) << text;
  EXPECT_NE(text.find("  10.0%     100 img/s"), std::string::npos) << text;
  std::fclose(file);
}

TEST(Metrics, EpochLineAndDurations) {
  MetricsRecord r = Sample();
  r.test = EvalResult{1.5, 0.625, 0.875};
  EXPECT_EQ(EpochLine(3, 10, r),
            "epoch 3/10: loss 0.7500, lr 0.01, 800 images/s, 3 learner(s) per device, 1m15s; test "
            "loss 1.5000, top-1 62.50%, top-5 87.50%");
  EXPECT_EQ(FormatDuration(7322), "2h02m");
  EXPECT_EQ(FormatDuration(9.96), "10.0s");
}

}  // namespace
}  // namespace crossbow
