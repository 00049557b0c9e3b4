#include "crossbow/train/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "crossbow/core/serialize.h"

namespace crossbow {
namespace {

constexpr const char* kInfo = "checkpoint/info";
constexpr const char* kTrainState = "checkpoint/train_source";
constexpr const char* kFormat = "crossbow-checkpoint-1";
constexpr const char* kFileName = "checkpoint.cbt";

Tensor BytesTensor(const std::string& bytes) {
  Tensor t({static_cast<int64_t>(bytes.size())}, DataType::kUInt8);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

std::string TensorBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.raw_data()), t.nbytes());
}

}  // namespace

void WriteCheckpoint(const std::string& path, const CheckpointInfo& info,
                     const std::string& train_state,
                     const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  nlohmann::json j = {{"format", kFormat},
                      {"net", info.net},
                      {"net_source", info.net_source},
                      {"sync", info.sync},
                      {"learners_per_device", info.learners_per_device},
                      {"iteration", info.iteration},
                      {"images", info.images},
                      {"elapsed_s", info.elapsed_s},
                      {"lr", info.lr},
                      {"lr_peak", info.lr_peak},
                      {"best_top1", info.best_top1},
                      {"time_to_accuracy_s", info.time_to_accuracy_s},
                      {"options", info.options}};
  Tensor meta = BytesTensor(j.dump());
  Tensor source = BytesTensor(train_state);
  std::vector<std::pair<std::string, const Tensor*>> all = tensors;
  all.emplace_back(kInfo, &meta);
  all.emplace_back(kTrainState, &source);
  SaveTensors(path, all);
}

Checkpoint ReadCheckpoint(const std::string& path) {
  Checkpoint c;
  c.tensors = LoadTensors(path);
  auto info = c.tensors.find(kInfo);
  auto source = c.tensors.find(kTrainState);
  CROSSBOW_ENFORCE(info != c.tensors.end() && source != c.tensors.end(), "'", path,
                   "' is a tensor file but not a training checkpoint (no '", kInfo, "')");
  nlohmann::json j = nlohmann::json::parse(TensorBytes(info->second), nullptr, false);
  CROSSBOW_ENFORCE(j.is_object() && j.value("format", "") == kFormat, "'", path,
                   "' is not a checkpoint of this format (expected '", kFormat, "')");
  try {
    c.info.net = j.at("net").get<std::string>();
    c.info.net_source = j.value("net_source", std::string());
    c.info.sync = j.at("sync").get<std::string>();
    c.info.learners_per_device = j.at("learners_per_device").get<int>();
    c.info.iteration = j.at("iteration").get<int64_t>();
    c.info.images = j.at("images").get<int64_t>();
    c.info.elapsed_s = j.at("elapsed_s").get<double>();
    c.info.lr = j.at("lr").get<double>();
    c.info.lr_peak = j.at("lr_peak").get<double>();
    c.info.best_top1 = j.at("best_top1").get<double>();
    c.info.time_to_accuracy_s = j.at("time_to_accuracy_s").get<double>();
    c.info.options = j.value("options", std::map<std::string, std::string>());
  } catch (const nlohmann::json::exception& e) {
    CROSSBOW_FAIL("checkpoint '", path, "' has bad counters: ", e.what());
  }
  c.train_state = TensorBytes(source->second);
  c.tensors.erase(info);
  c.tensors.erase(source);
  return c;
}

void CheckCompatible(const Checkpoint& checkpoint, const std::string& path, const std::string& net,
                     const std::vector<std::pair<std::string, const Tensor*>>& current) {
  CROSSBOW_ENFORCE(checkpoint.info.net == net, "checkpoint '", path, "' is of net '",
                   checkpoint.info.net, "', not '", net, "'");
  for (const auto& [name, tensor] : current) {
    if (name.rfind("z/", 0) != 0) continue;
    auto it = checkpoint.tensors.find(name);
    CROSSBOW_ENFORCE(it != checkpoint.tensors.end(), "checkpoint '", path, "' has no '", name, "'");
    CROSSBOW_ENFORCE(it->second.shape() == tensor->shape(), "checkpoint '", path, "': '", name,
                     "' has shape ", ShapeString(it->second.shape()), ", the net needs ",
                     ShapeString(tensor->shape()));
  }
}

EvalResult EvaluateCheckpoint(const LearnerSpec& spec, const std::string& path, BatchSource* test) {
  Checkpoint c = ReadCheckpoint(path);
  EngineOptions options;
  options.devices = ParseDevices("cpu");
  options.sync = c.info.sync;
  Engine engine(spec, options, test);
  CheckCompatible(c, path, spec.name, engine.StateTensors());
  engine.RestoreState(c.tensors, c.info.iteration);
  return engine.Evaluate(test);
}

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / kFileName).string();
}

void RemoveStaleTemporaries(const std::string& dir) {
  std::error_code ec;
  const std::string prefix = std::string(kFileName) + ".tmp.";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

}  // namespace crossbow
