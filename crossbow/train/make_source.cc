#include "crossbow/train/make_source.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "crossbow/core/enforce.h"
#include "crossbow/train/trainer_options.h"
#include "data/loader.h"
#include "data/presets.h"

namespace crossbow {

using nlohmann::json;

namespace {

// The table's defaults with `options_json` over them.
json WithDefaults(const std::string& options_json) {
  json o = json::object();
  for (const TrainerOption& t : TrainerOptionTable()) o[t.name] = json::parse(t.default_json);
  const json given = json::parse(options_json, nullptr, false);
  CROSSBOW_ENFORCE_VALUE(given.is_object(), "trainer options must be a JSON object");
  o.update(given);
  return o;
}

template <typename T>
T Get(const json& options, const char* name, T unset) {
  return options[name].is_null() ? unset : options[name].get<T>();
}

}  // namespace

std::shared_ptr<BatchSource> MakeSource(const std::string& db, bool train,
                                        const std::string& options_json, int input_size) {
  if (db.empty()) return nullptr;
  const json o = WithDefaults(options_json);
  const std::string preset = o["augment"];
  CROSSBOW_ENFORCE_VALUE(preset != "auto",
                         "--augment auto means the net's preset, and a spec does not name it: "
                         "give --augment cifar, imagenet, mnist or none");
  data::LoaderOptions l;
  l.path = db;
  l.batch_size = o["batch_size"];
  l.transform = data::PresetTransform(preset, train, input_size);
  data::ApplyOverrides({Get(o, "mean", std::vector<float>{}), Get(o, "std", std::vector<float>{}),
                        train ? Get(o, "min_crop_area", 0.0f) : 0.0f, o["eval_crop"]},
                       &l.transform);
  l.shuffle = train;
  l.seed = o["seed"];
  l.workers = o["workers"];
  l.read_order = o["read_order"];
  l.num_classes = Get(o, "num_classes", 0);
  return std::make_shared<data::ImageLoader>(std::move(l));
}

}  // namespace crossbow
