#include "crossbow/core/console.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>

namespace crossbow {
namespace {

class ConsoleSink : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char* full_filename, const char* base_filename,
            int line, const google::LogMessageTime& time, const char* message,
            size_t message_len) override {
    Console::Get().Line(ToString(severity, base_filename, line, time, message, message_len));
  }
};

}  // namespace

Console& Console::Get() {
  // Never destroyed: threads may log while the process exits.
  static Console* console = new Console(stderr, isatty(STDERR_FILENO) == 1);
  return *console;
}

Console::Console(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void Console::ClearStatus() {
  if (!status_.empty()) std::fputs("\r\x1b[K", out_);
}

void Console::Line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearStatus();
  std::fputs(text.c_str(), out_);
  std::fputc('\n', out_);
  if (!status_.empty()) std::fputs(status_.c_str(), out_);
  std::fflush(out_);
}

void Console::Status(const std::string& text) {
  if (!terminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ClearStatus();
  status_ = text;
  std::fputs(status_.c_str(), out_);
  std::fflush(out_);
}

void Console::EndStatus() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_.empty()) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  status_.clear();
}

void InitLogging(const char* program) {
  static std::once_flag once;
  std::call_once(once, [program] {
    if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging(program);
    FLAGS_logtostderr = false;
    FLAGS_stderrthreshold = google::NUM_SEVERITIES;  // glog itself writes nothing to stderr
    for (int severity = 0; severity < google::NUM_SEVERITIES; ++severity) {
      google::SetLogDestination(severity, "");  // and no log files
    }
    static ConsoleSink sink;
    google::AddLogSink(&sink);
  });
}

void SetVerbosity(int level) {
  FLAGS_minloglevel = level < 0 ? google::GLOG_WARNING : google::GLOG_INFO;
  FLAGS_v = level > 0 ? level : 0;
}

}  // namespace crossbow
