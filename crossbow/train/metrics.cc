#include "crossbow/train/metrics.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "crossbow/core/enforce.h"
#include "crossbow/core/serialize.h"

namespace crossbow {

std::string ToJson(const MetricsRecord& r) {
  nlohmann::json j = {{"iteration", r.iteration},
                      {"epoch", r.epoch},
                      {"time", r.time_s},
                      {"loss", r.loss},
                      {"lr", r.lr},
                      {"images_per_s", r.images_per_s},
                      {"learners_per_device", r.learners_per_device},
                      {"distance_to_z", r.distances}};
  if (r.test) {
    j["test_loss"] = r.test->loss;
    j["accuracy"] = r.test->top1;
    j["top5"] = r.test->top5;
  }
  // NaN is not JSON: a diverged loss is written as null.
  for (auto& [key, value] : j.items()) {
    if (value.is_number_float() && !std::isfinite(value.get<double>())) value = nullptr;
  }
  return j.dump();
}

namespace {

// Drops the records of `path` past iteration `last`, and any line that is not a whole record.
void KeepRecordsUpTo(const std::string& path, int64_t last) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // nothing written yet
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::istringstream lines(text);
  std::string kept, line;
  int64_t dropped = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object() && record.contains("iteration") &&
        record["iteration"].is_number_integer() && record["iteration"].get<int64_t>() <= last) {
      kept += line + '\n';
    } else {
      ++dropped;
    }
  }
  if (kept == text) return;
  WriteFileAtomically(path, kept);
  if (dropped > 0) {
    LOG(INFO) << "metrics: dropped " << dropped << " line(s) of '" << path << "' past iteration "
              << last << ", the checkpoint's (trained again from there)";
  }
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path, std::optional<int64_t> resumed_at) : path_(path) {
  if (resumed_at) KeepRecordsUpTo(path, *resumed_at);
  out_.open(path, resumed_at ? std::ios::app : std::ios::trunc);
  CROSSBOW_ENFORCE(out_.good(), "cannot write the metrics file '", path, "'");
}

void MetricsLog::Write(const MetricsRecord& record) {
  out_ << ToJson(record) << '\n';
  out_.flush();
  CROSSBOW_ENFORCE(out_.good(), "writing the metrics file '", path_, "' failed");
}

std::string FormatDuration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%dh%02dm", static_cast<int>(s / 3600),
                  static_cast<int>(s / 60) % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof(buf), "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1fs", s);
  }
  return buf;
}

ProgressBar::ProgressBar(Console* console) : console_(console), last_line_(Clock::now()) {}

void ProgressBar::Update(const std::string& label, double fraction, double images_per_s,
                         double eta_s, double loss) {
  const auto now = Clock::now();
  fraction = std::clamp(fraction, 0.0, 1.0);
  const bool terminal = console_->terminal();
  if (terminal && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  const bool tenth_more = fraction + 1e-9 >= last_line_fraction_ + 0.1;
  if (!terminal && !tenth_more && now - last_line_ < std::chrono::minutes(1)) return;
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s [%s%s] %5.1f%% %7.0f img/s ETA %s loss %.4f", label.c_str(),
                std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
                fraction * 100, images_per_s, FormatDuration(eta_s).c_str(), loss);
  if (terminal) {
    console_->Status(buf);
    last_draw_ = now;
    drawn_ = true;
  } else {
    console_->Line(buf);
    last_line_ = now;
    last_line_fraction_ = fraction;
  }
}

void ProgressBar::Finish() {
  if (drawn_) console_->EndStatus();
  drawn_ = false;
}

std::string EpochLine(int64_t epoch, int64_t epochs, const MetricsRecord& r) {
  char buf[256];
  const std::string of = epochs > 0 ? "/" + std::to_string(epochs) : "";
  int n = std::snprintf(buf, sizeof(buf),
                        "epoch %lld%s: loss %.4f, lr %.4g, %.0f images/s, %d learner(s) per "
                        "device, %s",
                        static_cast<long long>(epoch), of.c_str(), r.loss, r.lr, r.images_per_s,
                        r.learners_per_device, FormatDuration(r.time_s).c_str());
  std::string line(buf, std::min<int>(n, sizeof(buf) - 1));
  if (r.test) {
    std::snprintf(buf, sizeof(buf), "; test loss %.4f, top-1 %.2f%%, top-5 %.2f%%", r.test->loss,
                  r.test->top1 * 100, r.test->top5 * 100);
    line += buf;
  }
  return line;
}

}  // namespace crossbow
