#include "crossbow/engine/trainer_config.h"

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

void CheckTrainerOptions(const TrainerOptions& options, const Shape& input_shape,
                         const BatchSource* train, const BatchSource* test) {
  const TrainerOptions& o = options;
  CROSSBOW_ENFORCE_VALUE(train != nullptr, "the trainer needs a training source");
  CheckSource(train, "training", input_shape);
  if (test != nullptr) CheckSource(test, "test", input_shape);
  CROSSBOW_ENFORCE_VALUE(o.epochs >= 0 && o.iterations >= 0 && o.time_limit_s >= 0,
                         "epochs, iterations and time limit must be >= 0");
  CROSSBOW_ENFORCE_VALUE(o.epochs > 0 || o.iterations > 0 || o.time_limit_s > 0,
                         "set epochs, iterations or a time limit: training would never stop");
  CROSSBOW_ENFORCE_VALUE(o.target_accuracy >= 0 && o.target_accuracy <= 1,
                         "target accuracy must be in [0, 1], got ", o.target_accuracy);
  CROSSBOW_ENFORCE_VALUE(o.target_accuracy == 0 || test != nullptr,
                         "a target accuracy needs a test source");
  CROSSBOW_ENFORCE_VALUE(o.eval_every >= 0, "eval_every must be >= 0, got ", o.eval_every);
  CROSSBOW_ENFORCE_VALUE(o.log_every > 0, "log_every must be > 0, got ", o.log_every);
  CROSSBOW_ENFORCE_VALUE(o.stall_timeout_s >= 0, "stall_timeout must be >= 0 seconds, got ",
                         o.stall_timeout_s);
  CROSSBOW_ENFORCE_VALUE(o.checkpoint_every_epochs >= 0 && o.checkpoint_every_minutes >= 0,
                         "checkpoint intervals must be >= 0");
  CROSSBOW_ENFORCE_VALUE(!o.resume || !o.checkpoint_dir.empty(),
                         "resume needs a checkpoint directory");
  CROSSBOW_ENFORCE_VALUE(o.autotune_threshold > 0, "the autotuner threshold must be > 0, got ",
                         o.autotune_threshold);
}

}  // namespace crossbow
