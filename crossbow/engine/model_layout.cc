#include "crossbow/engine/model_layout.h"

#include <algorithm>
#include <cstring>

namespace crossbow {

ModelLayout::ModelLayout(Learner& reference) {
  int64_t offset = 0;
  for (auto* group : {&params_, &state_}) {
    const auto& names = group == &params_ ? reference.spec().params : reference.spec().state;
    for (const auto& name : names) {
      const Tensor* t = reference.Blob(name);
      CROSSBOW_ENFORCE_VALUE(t->is_plain() && t->dtype() == DataType::kFloat32, "model '",
                             reference.spec().name, "': blob '", name,
                             "' must be a plain float32 tensor to be synchronised, got ",
                             t->DebugString());
      group->push_back({name, t->shape(), offset, t->numel()});
      offset += t->numel();
    }
    if (group == &params_) param_floats_ = offset;
  }
  count_offset_ = offset;
}

std::vector<Tensor> ModelLayout::Views(const std::shared_ptr<uint8_t>& flat, Device device,
                                       const std::vector<Entry>& entries) {
  std::vector<Tensor> out;
  for (const auto& e : entries) out.push_back(ViewOf(flat, device, e.offset, e.shape));
  return out;
}

Tensor ViewOf(const std::shared_ptr<uint8_t>& storage, Device device, int64_t offset,
              const Shape& shape) {
  Tensor t(device);
  // The aliasing constructor: the view keeps the whole buffer alive.
  t.BindStorage(std::shared_ptr<uint8_t>(storage, storage.get() + offset * sizeof(float)),
                NumElements(shape) * sizeof(float));
  t.Resize(shape);
  return t;
}

void CopyTensor(const Tensor& src, Tensor* dst, const std::string& what) {
  CROSSBOW_ENFORCE_VALUE(
      src.is_plain() && src.dtype() == DataType::kFloat32 && src.shape() == dst->shape(), "'", what,
      "' must be a plain float32 tensor of shape ", ShapeString(dst->shape()), ", got ",
      src.DebugString());
  if (src.is_cpu() && dst->is_cpu()) {
    std::memcpy(dst->mutable_data<float>(), src.data<float>(), dst->numel() * sizeof(float));
  } else {
    CopyBytes(dst->raw_data(), dst->device(), src.raw_data(), src.device(), dst->nbytes());
  }
}

void Fill(Tensor* t, float value) {
  if (t->is_cpu()) {
    std::fill_n(t->mutable_data<float>(), t->numel(), value);
    return;
  }
  Tensor host(t->shape(), DataType::kFloat32);
  std::fill_n(host.mutable_data<float>(), host.numel(), value);
  CopyTensor(host, t, "fill");
}

}  // namespace crossbow
