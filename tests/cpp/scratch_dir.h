#pragma once

#include <string>

namespace crossbow {

// A fresh, empty folder for one test: <temp>/crossbow_tests_<pid>/<name>. The whole
// <temp>/crossbow_tests_<pid> goes when the test program exits (not when a child it forked
// does), so that no run leaves folders behind.
std::string ScratchDir(const std::string& name);

}  // namespace crossbow
