#include "tests/cpp/scratch_dir.h"

#include <unistd.h>

#include <filesystem>

namespace crossbow {
namespace {

namespace fs = std::filesystem;

struct Root {
  const pid_t owner = ::getpid();
  const fs::path path = fs::temp_directory_path() / ("crossbow_tests_" + std::to_string(owner));
  ~Root() {
    std::error_code ignored;
    if (::getpid() == owner) fs::remove_all(path, ignored);
  }
};

}  // namespace

std::string ScratchDir(const std::string& name) {
  static Root root;
  const fs::path dir = root.path / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace crossbow
