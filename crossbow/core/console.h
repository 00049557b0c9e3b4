#pragma once

#include <cstdio>
#include <mutex>
#include <string>

namespace crossbow {

// The process's stderr, shared by log lines and one status line (a progress bar), so that
// neither breaks the other: on a terminal a log line clears the status line, prints, and redraws
// it; elsewhere (a log file, a pipe) status lines are not drawn and nothing uses a carriage
// return. glog reaches stderr only through here once InitLogging has run.
class Console {
 public:
  static Console& Get();                   // stderr
  Console(std::FILE* out, bool terminal);  // for tests

  bool terminal() const { return terminal_; }
  void Line(const std::string& text);    // a whole line; the newline is added
  void Status(const std::string& text);  // replaces the status line (terminals only)
  void EndStatus();                      // keeps the status line as a line of its own

 private:
  void ClearStatus();  // with mutex_ held

  std::FILE* const out_;
  const bool terminal_;
  std::mutex mutex_;
  std::string status_;  // drawn now; empty: none
};

// glog for the Python module and the tools: initialised once (no "Logging before
// InitGoogleLogging" preamble, no log files), every message through the Console.
void InitLogging(const char* program);
// -1 quiet: warnings and errors only; 0: per-epoch information; 1 and more: VLOG(level) too.
void SetVerbosity(int level);

}  // namespace crossbow
