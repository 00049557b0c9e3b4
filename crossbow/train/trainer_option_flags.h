#pragma once

#include <functional>
#include <string>
#include <vector>

#include "crossbow/train/trainer_options.h"

namespace crossbow {

// The options of the table (trainer_options.h) as flags of a C++ tool, read as `crossbow
// train` reads them: --name VALUE or --name=VALUE, with dashes or underscores; --name and
// --no-name for a bool; a list as comma-separated numbers. They are taken out of argv (so
// that gflags reads the tool's own flags after them) and returned as the JSON object that
// ParseTrainerConfig reads: every option, at its default unless a flag set it. Only the
// options that `read` takes are flags (a tool without a trainer has no --epochs). `given`, when
// not null, receives the names of the options that flags set.
using OptionFilter = std::function<bool(const TrainerOption&)>;
std::string TakeOptionFlags(int* argc, char** argv, const OptionFilter& read,
                            std::vector<std::string>* given = nullptr);

// Lines of a usage message, one per option `read` takes: "  --batch_size IMAGES  images ...".
std::string OptionFlagsHelp(const OptionFilter& read);

}  // namespace crossbow
