// The table of training options: every option once, with its type, default, unit, rule and
// doc, and how its value is read and set. The JSON parser, the checks, the cross-rank
// comparison and (through _C.trainer_options) Python's keyword arguments and flags are made
// from it; a key the table lacks is an error.
#include "crossbow/train/trainer_options.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "crossbow/core/names.h"
#include "crossbow/core/precision.h"
#include "crossbow/engine/learner_spec.h"
#include "crossbow/engine/sync/sync_defaults.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "crossbow/train/option_entry.h"
#include "crossbow/train/option_values.h"
#include "crossbow/train/trainer_config.h"
#include "data/epoch_order.h"
#include "data/presets.h"

namespace crossbow {
namespace {

using namespace option_table;

std::string AlphaDoc() {
  return "sma, easgd: pull of the learners towards the average model, in (0, 1]; auto: 1/N "
         "for N >= 2 learners (N of the whole job, again whenever the autotuner changes it), " +
         json(kOneLearnerAlpha).dump() + " for one";
}

std::string SyncPeriodDoc() {
  std::string own;
  for (const auto& [sync, period] : SyncPeriodDefaults()) {
    own += (own.empty() ? "" : ", ") + sync + " " + std::to_string(period);
  }
  return "sma, easgd, localsgd, diloco: synchronise every this many iterations (H, > 0); auto: "
         "the synchroniser's own (" +
         own + ")";
}

json GetLearners(const TrainerConfig& c) {
  return c.trainer.autotune ? json("auto") : json(std::to_string(c.engine.learners_per_device));
}

void SetLearners(const json& v, TrainerConfig* c) {
  c->trainer.autotune = v == "auto";
  if (c->trainer.autotune) return;
  const std::string s = v.get<std::string>();
  const bool digits = !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == s.npos;
  CROSSBOW_ENFORCE_VALUE(digits && std::stoi(s) >= 1, Flag("learners"),
                         " must be 'auto' or a number >= 1, got ", Shown(v));
  c->engine.learners_per_device = std::stoi(s);
}

std::vector<std::string> MomentumConventions() { return {"caffe2", "pytorch"}; }

const std::vector<Entry>& TableEntries() {
  static const std::vector<Entry> entries = {
      CROSSBOW_DATA("batch_size", Type::kInt, "images", Above(0),
                    "images per learner per iteration", 16),
      {"learners", Type::kString, Part::kEngine, "", Any(),
       "learners per device: a number, or auto (the autotuner picks)", false, GetLearners,
       SetLearners,
       [](const json& v) {
         return v.is_number_integer() ? json(std::to_string(v.get<int64_t>())) : v;
       }},
      CROSSBOW_ENGINE("sync", sync, "", OneOf(SynchroniserNames),
                      "sma (model averaging), easgd (elastic averaging), localsgd (periodic "
                      "averaging), diloco (outer Nesterov step on z), ssgd (synchronous SGD) or "
                      "sgd (one learner)"),
      AutoOr("sync_period", &EngineOptions::sync_period, "iterations", Above(0), SyncPeriodDoc()),
      CROSSBOW_ENGINE("sync_warmup", sync_warmup, "iterations", AtLeast(0),
                      "sma, easgd, localsgd, diloco: synchronise every iteration for the first "
                      "this many iterations (localsgd: S-SGD first, post-local SGD)"),
      PerRank({"devices", Type::kString, Part::kEngine, "", Any(),
               "cpu (all cores, one device), groups such as cpu:0-1,cpu:2-3, or GPUs such as "
               "cuda:0,cuda:1 (cuda:0,cuda:0: two devices on one GPU; cuda:local under mpirun: "
               "the GPU numbered as the rank on its machine)",
               false, [](const TrainerConfig&) { return json("cpu"); },
               [](const json& v, TrainerConfig* c) {
                 c->engine.devices = ParseDevices(v.get<std::string>());
               }}),
      CROSSBOW_UNSET("epochs", epochs, "epochs", Above(0), "stop after this many epochs"),
      CROSSBOW_UNSET("iterations", iterations, "iterations", Above(0),
                     "stop after this many iterations"),
      CROSSBOW_UNSET("time_limit", time_limit_s, "seconds", Above(0),
                     "stop after this much training time"),
      CROSSBOW_UNSET("target_accuracy", target_accuracy, "", Within(0, 1),
                     "stop when the test top-1 accuracy reaches this"),
      CROSSBOW_TRAINER("lr", lr.base_lr, "", AtLeast(0), "base learning rate"),
      CROSSBOW_TRAINER("lr_policy", lr.policy, "", OneOf(LrPolicyNames),
                       "fixed, step, multistep, exp, inv or poly (as Caffe), cosine (from the "
                       "end of the warm-up to --lr-end at the last epoch), flatcos (flat, then "
                       "cosine: fastai's fit_flat_cos) or onecycle (a cosine up from "
                       "--warmup-start over the warm-up, then down to --lr-end: fastai's "
                       "fit_one_cycle)"),
      CROSSBOW_TRAINER("gamma", lr.gamma, "", Above(0), "factor of step/multistep/exp/inv"),
      CROSSBOW_TRAINER("power", lr.power, "", Finite(), "exponent of inv/poly"),
      CROSSBOW_TRAINER("step_size", lr.step_size, "epochs", AtLeast(0),
                       "step: epochs between drops"),
      CROSSBOW_TRAINER("steps", lr.steps, "epochs", AtLeast(0),
                       "multistep: the epochs at which the rate drops (e.g. 80 120)"),
      CROSSBOW_TRAINER("flat_fraction", lr.flat, "", Fraction(),
                       "flatcos: share of training at the base rate before the cosine "
                       "(fastai's pct_start)"),
      CROSSBOW_TRAINER("lr_end", lr.end, "", Fraction(),
                       "cosine, flatcos, onecycle: the last rate, as a fraction of --lr "
                       "(fastai's 1 / div_final: 1e-5)"),
      CROSSBOW_TRAINER("momentum_cycle", lr.momentum, "", Fraction(),
                       "onecycle with adamw or radam: beta1 at the start, at the end of the "
                       "warm-up and at the end, cosines between them as the rate's (fastai's "
                       "moms: 0.95 0.85 0.95); default: beta1 stays"),
      CROSSBOW_TRAINER("warmup", lr.warmup, "epochs", AtLeast(0),
                       "warm-up of the rate: linear (composes with any policy), onecycle's own "
                       "cosine"),
      CROSSBOW_TRAINER("warmup_start", lr.warmup_start, "", Within(0, 1),
                       "warm-up's first factor of the rate"),
      CROSSBOW_TRAINER("lr_learner_scaling", lr.learner_scaling, "", OneOf(LearnerScalingNames),
                       "each learner's rate times none (1), sqrt (the square root of the job's "
                       "learners, once the autotuner has chosen them), linear (their number), or "
                       "auto: sqrt where learners step on their own batches (sma, easgd, "
                       "localsgd, diloco), none where they are one model (ssgd, sgd); the SMA "
                       "recipes of crossbow reproduce use sqrt"),
      CROSSBOW_NET("momentum", Type::kFloat, "", Fraction(), "learner momentum",
                   SolverConfig{}.momentum),
      CROSSBOW_NET("nesterov", Type::kBool, "", Any(),
                   "learners take Nesterov momentum steps (in --momentum-convention's convention: "
                   "caffe2's, the default, is PyTorch's SGD(nesterov=True) while the rate is "
                   "constant, not across its changes: drops, warm-up, decay)",
                   SolverConfig{}.nesterov),
      CROSSBOW_NET("momentum_convention", Type::kString, "", OneOf(MomentumConventions),
                   "sgd: caffe2 (v = m v - lr g; w += v) or pytorch (v = m v + g; w -= lr v, "
                   "torch.optim.SGD): the same steps at a constant rate, not after a change",
                   SolverConfig{}.momentum_convention),
      // The commands train (He et al.'s 1e-4); a Model decays nothing unless asked, as the
      // learner spec does.
      LibraryDefault(CROSSBOW_NET("weight_decay", Type::kFloat, "", AtLeast(0),
                                  "weight decay: L2 (added to the gradient) for sgd, decoupled "
                                  "(w *= 1 - lr wd) for adamw and radam",
                                  1e-4),
                     SolverConfig{}.weight_decay),
      CROSSBOW_NET("optimizer", Type::kString, "", OneOf(SolverTypes),
                   "each learner's optimiser: sgd (momentum SGD), adamw or radam (AdamW with "
                   "RAdam's rectification)",
                   SolverConfig{}.type),
      CROSSBOW_NET("betas", Type::kFloats, "", Fraction(),
                   "adamw, radam: the decays of the two moments (default 0.9 0.999)",
                   json::array()),
      CROSSBOW_NET("eps", Type::kFloat, "", Above(0), "adamw, radam: epsilon (default 1e-8)",
                   nullptr),
      CROSSBOW_NET("radam_eps", Type::kString, "", OneOf(RadamEpsPlacements),
                   "radam: eps added to sqrt(v) (raw, PyTorch's RAdam) or, as adamw's, to the "
                   "bias-corrected sqrt(v / (1 - beta2^t)) (corrected, fastai's RAdam and "
                   "Ranger); default raw",
                   nullptr),
      CROSSBOW_NET("lookahead_k", Type::kInt, "steps", Above(0),
                   "wrap the optimiser in Lookahead: a slow step every this many steps "
                   "(default: no Lookahead)",
                   nullptr),
      CROSSBOW_NET("lookahead_alpha", Type::kFloat, "", AboveAtMost(0, 1),
                   "Lookahead: the slow step's share of the way to the fast weights (default "
                   "0.5)",
                   nullptr),
      CROSSBOW_NET("bias_decay", Type::kBool, "", Any(),
                   "weight decay on 1-D parameters too (biases, batch-norm scales and "
                   "shifts); --no-bias-decay exempts them (He et al. 2019, Bag of Tricks)",
                   SolverConfig{}.bias_decay),
      CROSSBOW_NET("label_smoothing", Type::kFloat, "", Fraction(),
                   "share of each training target spread evenly over the classes (PyTorch's "
                   "CrossEntropyLoss label_smoothing); the loss reported is the smoothed one",
                   0.0),
      CROSSBOW_TRAINER("mixup_alpha", mix.mixup_alpha, "", AtLeast(0),
                       "Mixup (Zhang et al. 2018): each training batch is blended with a "
                       "permutation of itself, lam ~ Beta(a, a), and the loss weighs the two "
                       "labels by lam and 1 - lam; 0: off. With --cutmix-alpha, each batch takes "
                       "one of the two at even odds (timm's Mixup). Evaluation never mixes"),
      CROSSBOW_TRAINER("cutmix_alpha", mix.cutmix_alpha, "", AtLeast(0),
                       "CutMix (Yun et al. 2019): each training batch gets a box of area 1 - lam, "
                       "lam ~ Beta(a, a), pasted from a permutation of itself, lam then the area "
                       "left (as timm); 0: off"),
      AutoOr("alpha", &EngineOptions::alpha, "", AboveAtMost(0, 1), AlphaDoc()),
      CROSSBOW_ENGINE("central_momentum", central_momentum, "", Fraction(),
                      "sma: momentum of the average model"),
      CROSSBOW_ENGINE("central_momentum_type", central_momentum_type, "", OneOf([] {
                        return std::vector<std::string>{"polyak", "nesterov"};
                      }),
                      "sma: polyak or nesterov central momentum"),
      CROSSBOW_ENGINE("outer_lr", outer_lr, "", Above(0),
                      "diloco: learning rate of the outer step on z"),
      CROSSBOW_ENGINE("outer_momentum", outer_momentum, "", Fraction(),
                      "diloco: Nesterov momentum of the outer step"),
      CROSSBOW_ENGINE("restart_drop", restart_drop, "", Fraction(),
                      "sma, easgd: a rate at or below this fraction of the highest since the "
                      "last restart is a drop, at which every learner restarts from z with a "
                      "fresh optimiser state (0: never)"),
      CROSSBOW_TRAINER("autotune_threshold", autotune_threshold, "", AtLeast(0),
                       "the autotuner's choice is the learner count whose throughput last beat "
                       "the best by more than this fraction (it looks two counts past it)"),
      CROSSBOW_TRAINER("autotune_seconds", autotune_seconds, "seconds", AtLeast(0),
                       "the autotuner measures each learner count for at least this long (and " +
                           std::to_string(AutotunerOptions{}.window_iterations) + " iterations)"),
      CROSSBOW_TRAINER("autotune_confirm", autotune_confirm, "", Any(),
                       "the autotuner measures a count that beats the best once more, and the "
                       "best after it, and adds it only if the means still show the gain"),
      CROSSBOW_TRAINER("autotune_only", autotune_only, "", Any(),
                       "with learners auto: stop once the autotuner has chosen, its trials the "
                       "whole run (the count to fix with --learners N)"),
      CROSSBOW_ENGINE(
          "precision", precision, "", OneOf(PrecisionNames),
          "arithmetic of convolutions and FC layers: fp32; bf16 on GPUs and on CPUs with "
          "AVX512-BF16 or AMX (on CPUs activations too); tf32 and fp16 (scaled per tensor) on "
          "GPUs (weights, momentum, the average model and batch-norm statistics stay fp32)"),
      CROSSBOW_ENGINE("threads_per_learner", threads_per_learner, "threads", Above(0),
                      "threads each learner's operators run on"),
      CROSSBOW_TRAINER("eval_every", eval_every, "iterations", AtLeast(0),
                       "iterations between evaluations (0: every epoch)"),
      CROSSBOW_UNSET("checkpoint_dir", checkpoint_dir, "", Any(),
                     "where checkpoints go (none: no checkpoints)"),
      CROSSBOW_TRAINER("checkpoint_every_epochs", checkpoint_every_epochs, "epochs", AtLeast(0),
                       "epochs between checkpoints (0: never by epochs)"),
      CROSSBOW_TRAINER("checkpoint_every_minutes", checkpoint_every_minutes, "minutes", AtLeast(0),
                       "minutes between checkpoints (0: never by time)"),
      StartOnly(CROSSBOW_TRAINER("resume", resume, "", Any(),
                                 "continue from the checkpoint in checkpoint_dir, if any")),
      PerRank(CROSSBOW_UNSET("metrics", metrics_path, "", Any(), "metrics file (JSON lines)")),
      PerRank(CROSSBOW_FRONT_END("tensorboard", Type::kString, "", Any(),
                                 "TensorBoard folder: scalars written while training runs",
                                 nullptr)),
      CROSSBOW_TRAINER("log_every", log_every, "iterations", Above(0),
                       "iterations between metrics records"),
      PerRank(CROSSBOW_TRAINER("progress", progress, "", Any(), "a progress bar on stderr")),
      PerRank(CROSSBOW_TRAINER("stall_timeout", stall_timeout_s, "seconds", AtLeast(0),
                               "time without a finished iteration after which the run is "
                               "stuck: it ends, saying what each thread waits for (0: never)")),
      CROSSBOW_ENGINE("skip_nan", skip_nan, "", Any(),
                      "skip a batch whose loss, gradients or BN statistics are not finite "
                      "instead of stopping"),
      PerRank(CROSSBOW_DATA("workers", Type::kInt, "threads", Above(0),
                            "data loader threads per source", 2)),
      CROSSBOW_DATA("read_order", Type::kString, "", OneOf(data::ReadOrderNames),
                    "training order: random (uniform), block (contiguous blocks of about 8 MiB "
                    "shuffled, records mixed within 16 blocks: near-sequential reads for a DB "
                    "larger than memory) or auto (block when the DB is larger than half of "
                    "memory and its metadata shows its labels interleaved, as --shuffle at "
                    "conversion leaves them)",
                    "auto"),
      CROSSBOW_DATA("augment", Type::kString, "", Any(),
                    "input preset: cifar, imagenet, mnist or none (see the guide), or auto: "
                    "the net's own",
                    "auto"),
      CROSSBOW_NET("input_size", Type::kInt, "pixels", Within(64, 224),
                   "ImageNet nets: input side (default 224)", nullptr),
      CROSSBOW_NET("zero_init_residual", Type::kBool, "", Any(),
                   "ResNets: the batch norm that ends each residual branch starts at scale 0, "
                   "so that every block starts as the identity (Goyal et al. 2017; "
                   "torchvision's zero_init_residual)",
                   false),
      CROSSBOW_DATA("min_crop_area", Type::kFloat, "", AboveAtMost(0, 1),
                    "imagenet preset: the smallest fraction of an image's area a random-"
                    "resized crop takes, overriding the preset's 0.08 (torchvision's scale[0])",
                    nullptr),
      CROSSBOW_DATA("eval_crop", Type::kString, "", OneOf(data::EvalCropNames),
                    "evaluation images: the preset's (imagenet: shorter side to size / 0.875, "
                    "centre crop), squash (the whole image squashed to size + ceil(0.14 size / "
                    "8) 8, centre crop: fastai's RandomResizedCrop) or square (the centre "
                    "square resized: fastai's Resize), these two resized as Pillow's bilinear",
                    "preset"),
      CROSSBOW_DATA("mean", Type::kFloats, "", Within(0, 1),
                    "per-channel mean in [0, 1] units, overriding the preset's", json::array()),
      CROSSBOW_DATA("std", Type::kFloats, "", Above(0),
                    "per-channel standard deviation, overriding the preset's", json::array()),
      CROSSBOW_DATA("num_classes", Type::kInt, "", AtLeast(1),
                    "classes of the net's last layer (default: the net's dataset)", nullptr),
      CROSSBOW_ENGINE("seed", seed, "", AtLeast(0), "seed of initialisation and data order"),
      {"collective_timeout", Type::kFloat, Part::kEngine, "seconds", AboveBelow(0, 2e6),
       "MPI: time a rank waits for the others before it gives up (longer than an evaluation "
       "of the test set)",
       false, [](const TrainerConfig& c) { return json(c.engine.collective_timeout_ms / 1000.0); },
       [](const json& v, TrainerConfig* c) {
         c->engine.collective_timeout_ms = static_cast<int>(v.get<double>() * 1000);
       }},
  };
  return entries;
}

// AddOptionForTest's: their entries, the values parsed into them, and whether the table (from
// which flags and keywords are made once) has been read, after which none may be added.
struct TestOptions {
  std::deque<std::string> texts;  // the entries' names and docs (an Entry holds C strings)
  std::vector<Entry> entries;
  std::map<std::string, double> values;
  bool table_read = false;
};

TestOptions& ForTests() {
  static TestOptions t;
  return t;
}

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> all = TableEntries();
    all.insert(all.end(), ForTests().entries.begin(), ForTests().entries.end());
    ForTests().table_read = true;
    return all;
  }();
  return entries;
}

// The flags' defaults: a default-constructed config's, but on every CPU core with the
// autotuner picking the learners.
TrainerConfig Defaults() {
  TrainerConfig c;
  c.engine.devices = ParseDevices("cpu");
  c.trainer.autotune = true;
  return c;
}

void CheckPart(const TrainerConfig& c, Part part) {
  for (const Entry& e : Entries()) {
    if (e.part != part) continue;
    const json value = e.get(c);
    if (!value.is_null()) CheckRule(e.name, e.type, e.rule, value);
  }
}

}  // namespace

void AddOptionForTest(const std::string& name, const std::string& doc, double at_least,
                      double default_value) {
  CROSSBOW_ENFORCE(!ForTests().table_read, "option '", name,
                   "' was added for a test after the table of options was read");
  TestOptions& t = ForTests();
  const char* key = t.texts.emplace_back(name).c_str();
  t.values[name] = default_value;
  t.entries.push_back(
      {key, Type::kFloat, Part::kEngine, "", AtLeast(at_least), t.texts.emplace_back(doc).c_str(),
       false, [name](const TrainerConfig&) { return json(ForTests().values.at(name)); },
       [name](const json& v, TrainerConfig*) { ForTests().values[name] = v.get<double>(); }});
}

double TestOptionValue(const std::string& name) { return ForTests().values.at(name); }

std::vector<TrainerOption> TrainerOptionTable() {
  const TrainerConfig defaults = Defaults();
  std::vector<TrainerOption> out;
  for (const Entry& e : Entries()) {
    const std::string value = e.get(defaults).dump();
    out.push_back({e.name, kTypeNames[static_cast<int>(e.type)], value, e.unit,
                   e.rule.Text(e.type == Type::kInt), e.doc, kReaders[static_cast<int>(e.part)],
                   e.per_rank, e.library_default ? e.library_default->dump() : value});
  }
  return out;
}

namespace {

// An optimiser's option given to another optimiser is an error naming the flag, as is a
// Lookahead option without Lookahead. Set options are those not null in `j`.
void CheckOptimizerOptions(const json& j) {
  auto set = [&](const char* key) {
    return j.contains(key) && !j[key].is_null() && j[key] != json::array();
  };
  const std::string optimizer = set("optimizer") ? j["optimizer"].get<std::string>() : "sgd";
  const bool sgd = optimizer == "sgd";
  for (const char* key : {"betas", "eps"}) {
    CROSSBOW_ENFORCE_VALUE(!sgd || !set(key), Flag(key),
                           " is an option of optimizer (--optimizer) adamw and radam, not sgd");
  }
  const bool nesterov = set("nesterov") && j["nesterov"] == true;
  const bool pytorch = set("momentum_convention") && j["momentum_convention"] == "pytorch";
  for (const auto& [key, given] :
       {std::pair{"nesterov", nesterov}, std::pair{"momentum_convention", pytorch}}) {
    CROSSBOW_ENFORCE_VALUE(sgd || !given, Flag(key),
                           " is an option of optimizer (--optimizer) sgd, not ", optimizer);
  }
  CROSSBOW_ENFORCE_VALUE(!set("betas") || j["betas"].size() == 2, Flag("betas"),
                         " takes two values (beta1 beta2), got ", j["betas"].size());
  CROSSBOW_ENFORCE_VALUE(!set("lookahead_alpha") || set("lookahead_k"), Flag("lookahead_alpha"),
                         " needs lookahead_k (--lookahead-k): without it there is no Lookahead");
  CROSSBOW_ENFORCE_VALUE(!set("radam_eps") || optimizer == "radam", Flag("radam_eps"),
                         " is an option of optimizer (--optimizer) radam, not ", optimizer);
  CROSSBOW_ENFORCE_VALUE(!set("momentum_cycle") || !sgd, Flag("momentum_cycle"),
                         " moves the beta1 of optimizer (--optimizer) adamw or radam; sgd's "
                         "momentum is fixed");
}

}  // namespace

TrainerConfig ParseTrainerConfig(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  CROSSBOW_ENFORCE_VALUE(j.is_object(), "trainer options must be a JSON object");
  TrainerConfig c = Defaults();
  std::vector<std::string> names;
  for (const Entry& e : Entries()) names.push_back(e.name);
  for (const auto& [key, value] : j.items()) {
    auto it = std::find_if(Entries().begin(), Entries().end(),
                           [&](const Entry& e) { return key == e.name; });
    CROSSBOW_ENFORCE_VALUE(it != Entries().end(), "unknown trainer option '", key, "'",
                           DidYouMean(key, names));
    if (value.is_null()) continue;
    const json typed = Typed(it->respell ? it->respell(value) : value, it->type, key);
    CheckRule(it->name, it->type, it->rule, typed);
    if (it->set) it->set(typed, &c);
  }
  CheckOptimizerOptions(j);
  return c;
}

EngineOptions ParseEngineOptions(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  std::vector<std::string> names;
  for (const Entry& e : Entries()) {
    if (e.part == Part::kEngine) names.push_back(e.name);
  }
  if (j.is_object()) {
    for (const auto& item : j.items()) {
      CROSSBOW_ENFORCE_VALUE(std::count(names.begin(), names.end(), item.key()) > 0, "'",
                             item.key(), "' is not an engine option (they are ", JoinNames(names),
                             ")", DidYouMean(item.key(), names));
    }
  }
  TrainerConfig c = ParseTrainerConfig(text);
  if (c.trainer.autotune) c.engine.learners_per_device = 1;  // no autotuner without a trainer
  return c.engine;
}

void CheckEngineOptions(const EngineOptions& options) {
  CheckPart({options, TrainerOptions{}}, Part::kEngine);
  const Precision precision = ParsePrecision(options.precision);
  if (options.devices.empty()) CheckPrecisionOn(precision, DeviceType::kCPU);
  for (const DeviceLayout& d : options.devices) CheckPrecisionOn(precision, d.device.type);
}

void CheckTrainerOptions(const TrainerOptions& o) {
  CheckPart({EngineOptions{}, o}, Part::kTrainer);
  CROSSBOW_ENFORCE_VALUE(!o.autotune_only || o.autotune,
                         "autotune_only (--autotune-only) needs learners auto (--learners auto)");
  CROSSBOW_ENFORCE_VALUE(o.epochs > 0 || o.iterations > 0 || o.time_limit_s > 0 || o.autotune_only,
                         "set epochs, iterations or time_limit (--epochs, --iterations, "
                         "--time-limit): training would never stop");
  CROSSBOW_ENFORCE_VALUE(!o.resume || !o.checkpoint_dir.empty(),
                         "resume (--resume) needs a checkpoint_dir (--checkpoint-dir)");
  // Iterations and a time limit fix no end in epochs (an iteration's images change with the
  // learners the autotuner picks).
  CROSSBOW_ENFORCE_VALUE(!LrPolicyEnds(o.lr.policy) || o.lr.max > 0 || o.epochs > 0, "lr_policy ",
                         o.lr.policy,
                         " (--lr-policy) decays the rate to 0 at the end of "
                         "training, which epochs (--epochs) sets: give --epochs (iterations and "
                         "time_limit stop a run without fixing that end)");
  LrPolicy check(Schedule(o));  // what the policy needs of its options together
  CROSSBOW_ENFORCE_VALUE(o.epochs <= 0 || o.lr.warmup <= o.epochs, "the run ends at epoch ",
                         o.epochs, " (--epochs), before its warm-up (--warmup ", o.lr.warmup,
                         ") is over");
}

LrPolicyOptions Schedule(const TrainerOptions& o) {
  LrPolicyOptions lr = o.lr;
  if (LrPolicyEnds(lr.policy) && lr.max <= 0 && o.epochs > 0) {
    lr.max = static_cast<double>(o.epochs);
  }
  return lr;
}

namespace {

std::vector<std::pair<std::string, std::string>> Compared(const TrainerConfig& c,
                                                          bool with_start_only) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Entry& e : Entries()) {
    const bool inside = e.part == Part::kEngine || e.part == Part::kTrainer;
    if (inside && !e.per_rank && (with_start_only || !e.start_only)) {
      out.emplace_back(e.name, e.get(c).dump());
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> RankComparedOptions(
    const EngineOptions& engine, const TrainerOptions& trainer) {
  return Compared({engine, trainer}, /*with_start_only=*/true);
}

std::vector<std::pair<std::string, std::string>> CheckpointedOptions(
    const EngineOptions& engine, const TrainerOptions& trainer) {
  return Compared({engine, trainer}, /*with_start_only=*/false);
}

}  // namespace crossbow
