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

// The codecs, or null with the reason in `error`.
const ImageCodecs* Load(std::string* error) {
  const std::string path = LibraryPath();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    *error = detail::Concat("image files (JPEG, PNG ...) are decoded and encoded by ", path,
                            ", which does not load: ", why ? why : "unknown reason",
                            ". It needs OpenCV's imgcodecs (libopencv-imgcodecs); raw records "
                            "need neither");
    return nullptr;
  }
  auto table = reinterpret_cast<const ImageCodecs* (*)()>(dlsym(library, "crossbow_image_codecs"));
  if (table == nullptr) {
    *error = path + " has no crossbow_image_codecs: not Crossbow's codecs";
    return nullptr;
  }
  return table();
}

}  // namespace

const ImageCodecs& Codecs() {
  // Loaded once, failure included: a loader meeting encoded records without the library asks
  // dlopen once, not once a record.
  static std::string error;
  static const ImageCodecs* codecs = Load(&error);
  CROSSBOW_ENFORCE(codecs != nullptr, error);
  return *codecs;
}

}  // namespace crossbow::data
