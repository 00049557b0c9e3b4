#include "crossbow/train/trainer_config.h"

namespace crossbow {
namespace {

void CheckSource(const BatchSource* source, const char* what, const Shape& input_shape) {
  CROSSBOW_ENFORCE_VALUE(source->batch_size() > 0, what, " batch size must be > 0, got ",
                         source->batch_size());
  CROSSBOW_ENFORCE_VALUE(source->EpochSize() > 0, "the ", what, " source is empty");
  CROSSBOW_ENFORCE_VALUE(source->ExampleShape() == input_shape, "the ", what,
                         " source yields examples of shape ", ShapeString(source->ExampleShape()),
                         ", the net takes ", ShapeString(input_shape));
}

}  // namespace

void CheckTrainerSources(const TrainerOptions& options, const Shape& input_shape,
                         const BatchSource* train, const BatchSource* test) {
  CROSSBOW_ENFORCE_VALUE(train != nullptr, "the trainer needs a training source");
  CheckSource(train, "training", input_shape);
  if (test != nullptr) CheckSource(test, "test", input_shape);
  CROSSBOW_ENFORCE_VALUE(options.target_accuracy == 0 || test != nullptr,
                         "a target accuracy (--target-accuracy) needs a test source");
}

}  // namespace crossbow
