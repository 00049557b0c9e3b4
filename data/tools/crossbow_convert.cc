// crossbow_convert SUBCOMMAND [flags] ARGS...: builds LMDBs of Caffe Datum records.
#include <gflags/gflags.h>

#include <iostream>

#include "crossbow/core/console.h"
#include "crossbow/core/enforce.h"
#include "data/converters.h"

static const crossbow::data::ImagesetOptions kDefaults;

// An imageset flag: its default and help are the options' own (data/converters.h).
#define CROSSBOW_IMAGESET_FLAG(type, name, value) \
  DEFINE_##type(name, value, crossbow::data::ImagesetFlagDoc(#name))
CROSSBOW_IMAGESET_FLAG(int32, resize_width, kDefaults.resize_width);
CROSSBOW_IMAGESET_FLAG(int32, resize_height, kDefaults.resize_height);
CROSSBOW_IMAGESET_FLAG(int32, resize_shorter, kDefaults.resize_shorter);
CROSSBOW_IMAGESET_FLAG(int32, max_side, kDefaults.max_side);
CROSSBOW_IMAGESET_FLAG(bool, shuffle, kDefaults.shuffle);
CROSSBOW_IMAGESET_FLAG(uint32, seed, kDefaults.seed);
CROSSBOW_IMAGESET_FLAG(bool, gray, kDefaults.gray);
CROSSBOW_IMAGESET_FLAG(bool, encoded, kDefaults.encoded);
CROSSBOW_IMAGESET_FLAG(string, encode_type, kDefaults.encode_type.c_str());
CROSSBOW_IMAGESET_FLAG(bool, check_size, kDefaults.check_size);
DEFINE_bool(by_folder, false, "imageset: ROOT/ DB, one class per sub-folder of ROOT");
DEFINE_bool(coarse, false, "cifar100: use the 20 coarse labels instead of the 100 fine ones");
DEFINE_bool(write_metadata, false, "check: write the metadata the scan found beside the DB");
DEFINE_bool(overwrite, kDefaults.overwrite, "replace the DB if it exists");
DEFINE_bool(progress, kDefaults.progress, "print progress on stderr");

namespace {

using namespace crossbow::data;

constexpr char kUsage[] =
    "builds LMDBs of Caffe Datum records. Usage:\n"
    "  crossbow_convert imageset [flags] ROOT/ LISTFILE DB\n"
    "  crossbow_convert imageset --by_folder [flags] ROOT/ DB\n"
    "  crossbow_convert mnist [flags] IMAGES LABELS DB\n"
    "  crossbow_convert cifar10 [flags] DB FILE...\n"
    "  crossbow_convert cifar100 [--coarse] [flags] DB FILE...\n"
    "  crossbow_convert mean DB\n"
    "  crossbow_convert check [--write_metadata] DB   (a full scan, against its metadata)";

WriteOptions Write() {
  WriteOptions options;
  options.overwrite = FLAGS_overwrite;
  options.progress = FLAGS_progress;
  return options;
}

ImagesetOptions Imageset() {
  ImagesetOptions options;
  static_cast<WriteOptions&>(options) = Write();
  options.resize_width = FLAGS_resize_width;
  options.resize_height = FLAGS_resize_height;
  options.resize_shorter = FLAGS_resize_shorter;
  options.max_side = FLAGS_max_side;
  options.shuffle = FLAGS_shuffle;
  options.seed = FLAGS_seed;
  options.gray = FLAGS_gray;
  options.encoded = FLAGS_encoded;
  options.encode_type = FLAGS_encode_type;
  options.check_size = FLAGS_check_size;
  return options;
}

// Runs the subcommand in args[0] on args[1...]; false when the arguments do not fit it.
bool Run(const std::vector<std::string>& args) {
  const std::string& command = args[0];
  const size_t count = args.size() - 1;
  ConvertSummary summary;
  if (command == "imageset" && FLAGS_by_folder && count == 2) {
    summary = ConvertImageFolders(args[1], args[2], Imageset());
  } else if (command == "imageset" && !FLAGS_by_folder && count == 3) {
    summary = ConvertImageset(args[1], args[2], args[3], Imageset());
  } else if (command == "mnist" && count == 3) {
    summary = ConvertMnist(args[1], args[2], args[3], Write());
  } else if ((command == "cifar10" || command == "cifar100") && count >= 2) {
    const std::vector<std::string> files(args.begin() + 2, args.end());
    summary = command == "cifar10" ? ConvertCifar10(args[1], files, Write())
                                   : ConvertCifar100(args[1], files, FLAGS_coarse, Write());
  } else if (command == "check" && count == 1) {
    std::cout << CheckDb(args[1], FLAGS_write_metadata, FLAGS_progress).ToString() << std::endl;
    return true;
  } else if (command == "mean" && count == 1) {
    std::cout << ComputeChannelStats(args[1], FLAGS_progress).ToString() << std::endl;
    return true;
  } else {
    return false;
  }
  std::cout << summary.ToString() << std::endl;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  crossbow::InitLogging(argv[0]);
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && Run(args)) return 0;
  } catch (const crossbow::Error& e) {
    std::cerr << "crossbow_convert " << args[0] << ": " << e.what() << std::endl;
    return 1;
  }
  std::cerr << "crossbow_convert: " << kUsage << std::endl;
  return 2;
}
