#include "data/image_codecs.h"

#include <dlfcn.h>

#include <filesystem>

#include "crossbow/core/enforce.h"

namespace crossbow::data {
namespace {

constexpr char kLibrary[] = "libcrossbow_codecs.so";

// libcrossbow_codecs.so beside the file this function was loaded from (libcrossbow_data.so):
// the build folder, or the installed package.
std::string LibraryPath() {
  Dl_info info{};
  CROSSBOW_ENFORCE(
      dladdr(reinterpret_cast<void*>(&LibraryPath), &info) != 0 && info.dli_fname != nullptr,
      "cannot tell where libcrossbow_data.so was loaded from");
  return (std::filesystem::path(info.dli_fname).parent_path() / kLibrary).string();
}

const ImageCodecs* Load() {
  const std::string path = LibraryPath();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    CROSSBOW_FAIL("image files (JPEG, PNG ...) are decoded and encoded by ", path,
                  ", which does not load: ", why ? why : "unknown reason",
                  ". It needs OpenCV's imgcodecs (libopencv-imgcodecs); raw records need "
                  "neither");
  }
  auto table = reinterpret_cast<const ImageCodecs* (*)()>(dlsym(library, "crossbow_image_codecs"));
  CROSSBOW_ENFORCE(table != nullptr, path, " has no crossbow_image_codecs: not Crossbow's codecs");
  return table();
}

}  // namespace

const ImageCodecs& Codecs() {
  static const ImageCodecs* codecs = Load();  // a failed load throws, and is tried again
  return *codecs;
}

}  // namespace crossbow::data
