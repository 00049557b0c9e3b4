#include "crossbow/engine/learner.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "crossbow/core/autodiff.h"
#include "crossbow/core/fusion.h"
#include "crossbow/core/names.h"
#include "crossbow/core/precision.h"
#include "crossbow/core/serialize.h"
#include "crossbow/core/top_k.h"
#include "crossbow/engine/flat_ops.h"
#include "crossbow/engine/model_layout.h"

namespace crossbow {
namespace {

constexpr const char* kLearningRate = "lr";
constexpr const char* kMomentum = "momentum";

// The ops of `net` needed to produce `targets`, in order.
NetDef Prune(const NetDef& net, std::set<std::string> targets) {
  NetDef out = net;
  out.ops.clear();
  for (auto it = net.ops.rbegin(); it != net.ops.rend(); ++it) {
    bool needed = false;
    for (const auto& o : it->outputs) needed = needed || targets.count(o);
    if (!needed) continue;
    targets.insert(it->inputs.begin(), it->inputs.end());
    out.ops.insert(out.ops.begin(), *it);
  }
  return out;
}

// Inference mode: batch norm uses running statistics, dropout passes through and, without
// labels, the loss layer becomes a plain softmax.
NetDef InferenceNet(const NetDef& net, bool with_loss) {
  NetDef out = net;
  for (auto& op : out.ops) {
    op.args["is_test"] = int64_t{1};
    if (!with_loss && op.type == "SoftmaxWithLoss") {
      op = MakeOperator("Softmax", {op.inputs[0]}, {op.outputs[0]});
    }
  }
  return out;
}

// The blobs that carry a mixed batch's second labels and their weights.
std::string LabelB(const LearnerSpec& spec) { return spec.label + "_b"; }
std::string Lam(const LearnerSpec& spec) { return spec.label + "_lam"; }

// `train` with every SoftmaxWithLoss on the spec's label, and its gradient, reading the mixed
// targets too (their optional inputs: softmax_loss_op.h); empty where no loss reads the label.
NetDef WithMixedTargets(NetDef train, const LearnerSpec& spec) {
  bool found = false;
  for (auto& op : train.ops) {
    const bool loss = op.type == "SoftmaxWithLoss" || op.type == "SoftmaxWithLossGradient";
    if (!loss || op.inputs.size() < 2 || op.inputs[1] != spec.label) continue;
    op.inputs.insert(op.inputs.end(), {LabelB(spec), Lam(spec)});
    found = true;
  }
  return found ? train : NetDef{};
}

}  // namespace

Learner::Learner(LearnerSpec spec)
    : spec_(std::move(spec)),
      context_(MakeContext(spec_.device, spec_.seed, spec_.threads)),
      root_(nullptr, spec_.device) {
  CheckPrecisionOn(spec_.precision, spec_.device.type);
  context_->set_precision(spec_.precision);
  CROSSBOW_ENFORCE_VALUE(spec_.input_shape.size() == 3, "learner '", spec_.name,
                         "': input_shape must be [C, H, W], got ", ShapeString(spec_.input_shape));
  for (const auto& op : spec_.init_net.ops) {
    for (const auto& out : op.outputs) root_.CreateTensor(out);
  }
  Net(spec_.init_net, &root_, context_.get(), {}, /*plan_memory=*/false).Run();
  for (const auto& param : spec_.params) {
    CROSSBOW_ENFORCE_VALUE(root_.GetTensor(param)->defined(), "parameter '", param,
                           "' is not created by the init net");
  }
  root_.CreateTensor(kLearningRate)->Resize({1});
  SetLearningRate(static_cast<float>(spec_.solver.lr));
  if (spec_.solver.type != "sgd") {
    root_.CreateTensor(kMomentum)->Resize({1});
    SetMomentum(static_cast<float>(spec_.solver.beta1));
  }
  root_.CreateTensor(spec_.input);
  root_.CreateTensor(spec_.label);
  root_.CreateTensor(LabelB(spec_));
  root_.CreateTensor(Lam(spec_));

  std::set<std::string> fetched(spec_.accuracy.begin(), spec_.accuracy.end());
  fetched.insert({spec_.loss, spec_.output});
  unfused_net_ = spec_.net;
  // Before autodiff, so that the backward pass is the fused operators' gradients.
  spec_.net = FuseOperators(spec_.net, fetched);
  CheckForwardNet();
  GradientNet backward = AddGradientOps(spec_.net, spec_.loss, spec_.params);
  train_def_ = spec_.net;
  train_def_.name = spec_.name + "_train";
  train_def_.ops.insert(train_def_.ops.end(), backward.ops.begin(), backward.ops.end());
  update_begin_ = train_def_.ops.size();
  gradients_ = backward.gradients;
  OptimizerOps update =
      MakeOptimizerOps(spec_.solver, spec_.params, backward.gradients, kLearningRate, kMomentum,
                       [&](const std::string& p) {
                         return spec_.solver.bias_decay || root_.GetTensor(p)->ndim() > 1;
                       });
  train_def_.ops.insert(train_def_.ops.end(), update.ops.begin(), update.ops.end());
  optimizer_state_ = std::move(update.state);
  mixed_train_def_ = WithMixedTargets(train_def_, spec_);
  for (const auto& blob : optimizer_state_) {
    const bool count = blob.start == OptimizerStateBlob::Start::kCount;
    Tensor zeros(count ? Shape{1} : root_.GetTensor(blob.param)->shape(), DataType::kFloat32);
    std::fill_n(zeros.mutable_data<float>(), zeros.numel(), 0.f);
    CopyTensor(zeros, root_.CreateTensor(blob.name));
  }
  ResetOptimizerState();
}

void Learner::ResetOptimizerState() {
  context_->BindThread();
  for (const auto& blob : optimizer_state_) {
    if (blob.start == OptimizerStateBlob::Start::kParam) {
      CopyTensor(*root_.GetTensor(blob.param), root_.GetTensor(blob.name));
    } else {
      Fill(root_.GetTensor(blob.name), 0.f);
    }
  }
}

int64_t Learner::OptimizerStateFloats() {
  int64_t n = 0;
  for (const auto& blob : optimizer_state_) n += root_.GetTensor(blob.name)->numel();
  return n;
}

// Runs the schemas over the forward net for one example, so that unknown operators, wrong
// arities, blobs that nothing produces and shape mismatches fail here, before autodiff.
void Learner::CheckForwardNet() {
  Shape data = spec_.input_shape;
  data.insert(data.begin(), 1);
  std::map<std::string, TensorShape> fed = {{spec_.input, {data}},
                                            {spec_.label, {{1}, DataType::kInt32}}};
  InferShapes(spec_.net, [&](const std::string& name) -> const TensorShape* {
    auto it = fed.find(name);
    if (it != fed.end()) return &it->second;
    if (!root_.HasTensor(name) || !root_.GetTensor(name)->defined()) return nullptr;
    const Tensor* t = root_.GetTensor(name);
    return &(fed[name] = TensorShape{t->shape(), t->dtype()});
  });
}

void Learner::Feed(const float* images, const Shape& shape, const int32_t* labels,
                   const int32_t* labels_b, const float* lam) {
  Shape expected = spec_.input_shape;
  expected.insert(expected.begin(), shape.empty() ? 0 : shape[0]);
  CROSSBOW_ENFORCE_VALUE(shape.size() == 4 && shape == expected && shape[0] > 0, "learner '",
                         spec_.name, "': input '", spec_.input, "' must have shape [N, ",
                         spec_.input_shape[0], ", ", spec_.input_shape[1], ", ",
                         spec_.input_shape[2], "] with N > 0, got ", ShapeString(shape));
  context_->BindThread();
  Tensor* data = root_.GetTensor(spec_.input);
  const void* before = data->raw_data();
  data->Resize(shape);
  bool moved = data->raw_data() != before;
  context_->Copy(data->raw_data(), images, data->nbytes());
  if (labels != nullptr) {
    Tensor* label = root_.GetTensor(spec_.label);
    before = label->raw_data();
    label->Resize({shape[0]}, DataType::kInt32);
    moved = moved || label->raw_data() != before;
    context_->Copy(label->raw_data(), labels, label->nbytes());
  }
  if (labels_b != nullptr) {
    for (const auto& [name, from, type] :
         {std::tuple{LabelB(spec_), static_cast<const void*>(labels_b), DataType::kInt32},
          std::tuple{Lam(spec_), static_cast<const void*>(lam), DataType::kFloat32}}) {
      Tensor* t = root_.GetTensor(name);
      before = t->raw_data();
      t->Resize({shape[0]}, type);
      moved = moved || t->raw_data() != before;
      context_->Copy(t->raw_data(), from, t->nbytes());
    }
  }
  // A batch larger than any before reallocates the input: the recordings of every plan (other
  // batch sizes) hold its old address, freed now.
  if (moved) {
    for (auto& [batch, plan] : train_plans_) plan.net->ForgetRecordings();
    for (auto& [key, net] : inference_plans_) net->ForgetRecordings();
    for (auto& [key, net] : forward_plans_) net->ForgetRecordings();
  }
}

// Waits for the learner's work: the host's batch memory is free to reuse after this.
float Learner::ReadFloat(const Tensor& t) {
  float value = 0;
  context_->Copy(&value, t.raw_data(), sizeof(float));
  context_->Synchronize();
  return value;
}

Learner::TrainPlan& Learner::TrainPlanFor(int64_t batch, bool mixed) {
  CROSSBOW_ENFORCE_VALUE(!mixed || !mixed_train_def_.ops.empty(), "learner '", spec_.name,
                         "': a mixed batch (Mixup, CutMix) needs a SoftmaxWithLoss on the label '",
                         spec_.label, "', which weighs the two labels; this net has none");
  TrainPlan& plan = train_plans_[{batch, mixed}];
  if (!plan.net) {
    // A source mixes all of its batches or none: the other kind's plan of this size (the
    // engine's warm-up step) would only hold memory.
    train_plans_.erase({batch, !mixed});
    std::set<std::string> keep(spec_.accuracy.begin(), spec_.accuracy.end());
    keep.insert({spec_.loss, spec_.output});
    plan.net = std::make_unique<Net>(mixed ? mixed_train_def_ : train_def_, &root_, context_.get(),
                                     keep, spec_.plan_memory);
    if (!spec_.cuda_graphs) plan.net->DisableCapture();
    plan.update_begin = update_begin_;
  }
  last_plan_ = {batch, mixed};
  return plan;
}

Net& Learner::InferencePlanFor(int64_t batch, bool with_loss) {
  auto& net = inference_plans_[{batch, with_loss}];
  if (!net) {
    std::set<std::string> keep = {spec_.output};
    if (with_loss) keep.insert(spec_.loss);
    NetDef def = Prune(InferenceNet(spec_.net, with_loss), keep);
    def.name = spec_.name + "_inference";
    net = std::make_unique<Net>(def, &root_, context_.get(), keep, spec_.plan_memory);
    if (!spec_.cuda_graphs) net->DisableCapture();
  }
  return *net;
}

Tensor* Learner::TrainingBlob(const std::string& name) {
  CROSSBOW_ENFORCE(last_plan_.first > 0, "learner '", spec_.name, "': blob '", name,
                   "' of the training plan was asked for before the first step");
  return train_plans_.at(last_plan_).net->Blob(name);
}

float Learner::Step(const float* images, const Shape& shape, const int32_t* labels) {
  const float loss = ForwardBackward(images, shape, labels);
  CROSSBOW_ENFORCE(std::isfinite(loss), "learner '", spec_.name, "': loss is ", loss,
                   " at iteration ", iteration_, "; the update was skipped");
  CROSSBOW_ENFORCE(GradientsAndStatisticsFinite(), "learner '", spec_.name,
                   "': gradients or batch-norm statistics are not finite at iteration ", iteration_,
                   " (the loss is ", loss, "); the update was skipped");
  Update();
  return loss;
}

float Learner::ForwardBackward(const float* images, const Shape& shape, const int32_t* labels,
                               const int32_t* labels_b, const float* lam) {
  CROSSBOW_ENFORCE((labels_b == nullptr) == (lam == nullptr), "learner '", spec_.name,
                   "': a mixed batch needs both labels_b and lam");
  Feed(images, shape, labels, labels_b, lam);
  TrainPlan& plan = TrainPlanFor(shape[0], labels_b != nullptr);
  plan.net->Run(0, plan.update_begin);
  return ReadFloat(*plan.net->Blob(spec_.loss));
}

bool Learner::GradientsAndStatisticsFinite() {
  auto finite = [](const Tensor& t) {
    if (t.is_cpu()) return flat::AllFinite(t.data<float>(), t.numel());
    const Tensor host = ToHost(t);
    return flat::AllFinite(host.data<float>(), host.numel());
  };
  for (const auto& param : spec_.params) {
    if (!finite(*Gradient(param))) return false;
  }
  for (const auto& name : spec_.state) {
    if (!finite(*root_.GetTensor(name))) return false;
  }
  return true;
}

void Learner::Update() {
  CROSSBOW_ENFORCE(!train_plans_.empty(), "learner '", spec_.name,
                   "': Update needs a ForwardBackward first");
  TrainPlan& plan = train_plans_.at(last_plan_);
  plan.net->Run(plan.update_begin);
  ++iteration_;
}

Tensor* Learner::Gradient(const std::string& param) {
  auto it = gradients_.find(param);
  CROSSBOW_ENFORCE(it != gradients_.end(), "learner '", spec_.name, "': '", param,
                   "' is not a parameter");
  CROSSBOW_ENFORCE(!train_plans_.empty(), "learner '", spec_.name,
                   "': no gradient before the first ForwardBackward");
  return train_plans_.at(last_plan_).net->Blob(it->second);
}

const Tensor& Learner::Predict(const float* images, const Shape& shape) {
  Feed(images, shape, nullptr);
  Net& net = InferencePlanFor(shape[0], false);
  net.Run();
  return *net.Blob(spec_.output);
}

EvalResult Learner::Evaluate(const float* images, const Shape& shape, const int32_t* labels) {
  Feed(images, shape, labels);
  Net& net = InferencePlanFor(shape[0], true);
  net.Run();
  const Tensor& output = *net.Blob(spec_.output);
  CROSSBOW_ENFORCE(output.is_plain() && output.ndim() == 2, "output '", spec_.output,
                   "' must be a plain [N, classes] tensor, got ", output.DebugString());
  EvalResult result;
  result.loss = ReadFloat(*net.Blob(spec_.loss));
  const Tensor host = output.is_cpu() ? Tensor() : ToHost(output);
  const Tensor& prob = output.is_cpu() ? output : host;
  const int64_t n = prob.dim(0), classes = prob.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = prob.data<float>() + i * classes;
    result.top1 += IsTopKHit(row, classes, labels[i], 1);
    result.top5 += IsTopKHit(row, classes, labels[i], 5);
  }
  result.top1 /= n;
  result.top5 /= n;
  return result;
}

Net& Learner::ForwardPlanFor(int64_t batch, bool with_loss, const std::set<std::string>& outputs) {
  const auto key = std::make_tuple(batch, with_loss, outputs);
  auto found = forward_plans_.find(key);
  if (found == forward_plans_.end()) {
    const NetDef inference = InferenceNet(FuseOperators(unfused_net_, outputs), with_loss);
    std::set<std::string> known = {spec_.input};
    if (with_loss) known.insert(spec_.label);
    for (const auto& op : inference.ops) {
      known.insert(op.inputs.begin(), op.inputs.end());
      known.insert(op.outputs.begin(), op.outputs.end());
    }
    for (const auto& name : outputs) {
      if (known.count(name)) continue;
      const std::vector<std::string> names(known.begin(), known.end());
      throw ValueError(detail::Concat("learner '", spec_.name, "': the forward net ",
                                      with_loss ? "" : "without labels ", "has no blob '", name,
                                      "'", DidYouMean(name, names),
                                      " (its blobs: ", JoinNames(names), ")"));
    }
    NetDef def = Prune(inference, outputs);
    def.name = spec_.name + "_forward";
    auto net = std::make_unique<Net>(def, &root_, context_.get(), outputs, spec_.plan_memory);
    if (!spec_.cuda_graphs) net->DisableCapture();
    found = forward_plans_.emplace(key, std::move(net)).first;  // only a plan made: Feed reads all
  }
  return *found->second;
}

void Learner::Forward(const float* images, const Shape& shape, const int32_t* labels,
                      const std::set<std::string>& outputs) {
  CROSSBOW_ENFORCE_VALUE(!outputs.empty(), "learner '", spec_.name, "': Forward needs outputs");
  last_forward_ = nullptr;
  Feed(images, shape, labels);
  Net& net = ForwardPlanFor(shape[0], labels != nullptr, outputs);
  net.Run();
  context_->Synchronize();
  last_forward_ = &net;
  last_outputs_ = outputs;
}

const Tensor& Learner::Fetch(const std::string& name) {
  if (last_forward_ != nullptr && last_outputs_.count(name)) return *last_forward_->Blob(name);
  if (!train_plans_.empty()) {
    for (const auto& [param, gradient] : gradients_) {
      if (gradient == name) return *Gradient(param);
    }
  }
  if (root_.HasTensor(name) && root_.GetTensor(name)->defined()) return *root_.GetTensor(name);
  const std::vector<std::string> names = FetchableNames();
  throw ValueError(detail::Concat("learner '", spec_.name, "': no blob '", name, "' to fetch",
                                  DidYouMean(name, names), " (blobs now: ", JoinNames(names),
                                  "; the net's other blobs are read with Forward's outputs)"));
}

std::vector<std::string> Learner::FetchableNames() const {
  std::set<std::string> names;
  for (const auto& name : root_.TensorNames()) {
    if (root_.GetTensor(name)->defined()) names.insert(name);
  }
  if (last_forward_ != nullptr) names.insert(last_outputs_.begin(), last_outputs_.end());
  if (!train_plans_.empty()) {
    for (const auto& [param, gradient] : gradients_) names.insert(gradient);
  }
  return {names.begin(), names.end()};
}

void Learner::SetLearningRate(float lr) {
  context_->BindThread();
  context_->Copy(root_.GetTensor(kLearningRate)->raw_data(), &lr, sizeof(float));
  context_->Synchronize();
}

void Learner::SetMomentum(float momentum) {
  CROSSBOW_ENFORCE_VALUE(spec_.solver.type != "sgd", "learner '", spec_.name,
                         "': a momentum schedule sets the beta1 of adamw and radam; sgd's momentum "
                         "is fixed");
  CROSSBOW_ENFORCE_VALUE(momentum >= 0 && momentum < 1, "learner '", spec_.name,
                         "': momentum (beta1) must be in [0, 1), got ", momentum);
  context_->BindThread();
  context_->Copy(root_.GetTensor(kMomentum)->raw_data(), &momentum, sizeof(float));
  context_->Synchronize();
}

void Learner::Save(const std::string& path) {
  std::vector<std::pair<std::string, const Tensor*>> tensors;
  for (const auto& names : {spec_.params, spec_.state}) {
    for (const auto& name : names) tensors.emplace_back(name, root_.GetTensor(name));
  }
  SaveTensors(path, tensors);
}

void Learner::Load(const std::string& path) {
  std::map<std::string, Tensor> loaded = LoadTensors(path);
  for (const auto& names : {spec_.params, spec_.state}) {
    for (const auto& name : names) {
      auto it = loaded.find(name);
      CROSSBOW_ENFORCE(it != loaded.end(), "'", path, "' has no blob '", name, "' of model '",
                       spec_.name, "'");
      Tensor* mine = root_.GetTensor(name);
      CROSSBOW_ENFORCE_VALUE(it->second.shape() == mine->shape(), "blob '", name, "' in '", path,
                             "' has shape ", ShapeString(it->second.shape()), ", model '",
                             spec_.name, "' expects ", ShapeString(mine->shape()));
    }
  }
  context_->BindThread();
  for (const auto& names : {spec_.params, spec_.state}) {
    for (const auto& name : names) CopyTensor(loaded[name], root_.GetTensor(name));
  }
}

MemoryStats Learner::memory_stats() const {
  auto it = train_plans_.find(last_plan_);
  return it == train_plans_.end() ? MemoryStats{} : it->second.net->memory_stats();
}

}  // namespace crossbow
