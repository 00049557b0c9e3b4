#include "crossbow/core/autodiff.h"

#include <algorithm>
#include <set>

#include "crossbow/core/operator.h"

namespace crossbow {
namespace {

class GradientBuilder {
 public:
  explicit GradientBuilder(GradientNet* out) : out_(out) {}

  // A fresh name for one contribution to d blob.
  std::string NewContribution(const std::string& blob) {
    std::string name = blob + "_grad";
    int& uses = name_uses_[name];
    if (uses++ > 0) name += "_" + std::to_string(uses - 1);
    pending_[blob].push_back(name);
    return name;
  }

  // Forgets a contribution that the gradient maker chose not to produce.
  void Discard(const std::string& blob, const std::string& name) {
    auto& parts = pending_[blob];
    parts.erase(std::remove(parts.begin(), parts.end(), name), parts.end());
    if (parts.empty()) pending_.erase(blob);
  }

  // Sums the pending contributions to d blob into one blob; "" when there are none.
  std::string Collect(const std::string& blob) {
    auto it = pending_.find(blob);
    if (it == pending_.end()) return "";
    std::vector<std::string> parts = std::move(it->second);
    pending_.erase(it);
    if (parts.size() == 1) return parts[0];
    std::string total = blob + "_grad_sum";
    int& uses = name_uses_[total];
    if (uses++ > 0) total += "_" + std::to_string(uses - 1);
    out_->ops.push_back(MakeOperator("Sum", parts, {total}));
    return total;
  }

 private:
  GradientNet* out_;
  std::map<std::string, std::vector<std::string>> pending_;
  std::map<std::string, int> name_uses_;
};

// Blobs whose value depends on some parameter.
std::set<std::string> DependOnParams(const NetDef& net, const std::vector<std::string>& params) {
  std::set<std::string> depends(params.begin(), params.end());
  for (const auto& op : net.ops) {
    bool any = false;
    for (const auto& in : op.inputs) any = any || depends.count(in);
    if (!any) continue;
    for (const auto& out : op.outputs) {
      bool state_in_place = false;  // running statistics updated in place carry no gradient
      for (const auto& in : op.inputs) state_in_place = state_in_place || in == out;
      if (!state_in_place || depends.count(out)) depends.insert(out);
    }
  }
  return depends;
}

}  // namespace

GradientNet AddGradientOps(const NetDef& forward, const std::string& loss,
                           const std::vector<std::string>& params) {
  std::set<std::string> depends = DependOnParams(forward, params);
  CROSSBOW_ENFORCE_VALUE(depends.count(loss), "loss '", loss,
                         "' does not depend on any parameter of net '", forward.name, "'");
  GradientNet result;
  GradientBuilder builder(&result);
  result.ops.push_back(
      MakeOperator("ConstantFill", {loss}, {builder.NewContribution(loss)}, {{"value", 1.0}}));

  for (auto it = forward.ops.rbegin(); it != forward.ops.rend(); ++it) {
    const OperatorDef& op = *it;
    std::vector<std::string> output_grads;
    bool any_output_grad = false;
    for (const auto& out : op.outputs) {
      output_grads.push_back(out.empty() ? "" : builder.Collect(out));
      any_output_grad = any_output_grad || !output_grads.back().empty();
    }
    if (!any_output_grad) continue;
    std::vector<std::string> input_grads;
    for (const auto& in : op.inputs) {
      input_grads.push_back(depends.count(in) ? builder.NewContribution(in) : "");
    }
    const GradientMaker* maker = GradientRegistry::Find(op.type);
    CROSSBOW_ENFORCE(maker != nullptr, op.Label(), " lies between a parameter and loss '", loss,
                     "' but has no gradient");
    std::set<std::string> produced;
    for (auto& grad_op : (*maker)(GradientHelper(op, output_grads, input_grads))) {
      produced.insert(grad_op.outputs.begin(), grad_op.outputs.end());
      result.ops.push_back(std::move(grad_op));
    }
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (!input_grads[i].empty() && !produced.count(input_grads[i])) {
        builder.Discard(op.inputs[i], input_grads[i]);
      }
    }
  }
  for (const auto& param : params) {
    std::string grad = builder.Collect(param);
    CROSSBOW_ENFORCE_VALUE(!grad.empty(), "parameter '", param, "' does not affect loss '", loss,
                           "'");
    result.gradients[param] = grad;
  }
  return result;
}

}  // namespace crossbow
