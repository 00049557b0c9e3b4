#include "crossbow/core/precision.h"

#include <algorithm>

#include "crossbow/core/enforce.h"
#include "crossbow/core/names.h"

namespace crossbow {
namespace {

// oneDNN's ISA values are bit sets, each holding those of the sets it extends.
bool CpuHas(dnnl::cpu_isa isa) {
  const auto bits = static_cast<unsigned>(isa);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & bits) == bits;
}

}  // namespace

bool CpuHasBf16() { return CpuHas(dnnl::cpu_isa::avx512_core_bf16); }

bool CpuHasAmx() { return CpuHas(dnnl::cpu_isa::avx512_core_amx); }

bool CpuHasAvx512() {
  static const bool has = CpuHas(dnnl::cpu_isa::avx512_core);
  return has;
}

const std::vector<std::string>& PrecisionNames() {
  static const std::vector<std::string> names = {"fp32", "bf16", "tf32", "fp16"};
  return names;
}

const char* PrecisionName(Precision precision) {
  return PrecisionNames()[static_cast<size_t>(precision)].c_str();
}

Precision ParsePrecision(const std::string& name) {
  const auto& names = PrecisionNames();
  const auto it = std::find(names.begin(), names.end(), name);
  CROSSBOW_ENFORCE_VALUE(it != names.end(), "unknown precision '", name,
                         "' (precisions: ", JoinNames(names), ")", DidYouMean(name, names));
  return static_cast<Precision>(it - names.begin());
}

std::string CpuIsaName() {
  struct Named {
    dnnl::cpu_isa isa;
    const char* name;
  };
  // Widest first: the first whose bits are all present is the one oneDNN uses.
  static const Named kIsas[] = {
      {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx"},
      {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
      {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
      {dnnl::cpu_isa::avx512_core, "avx512_core"},
      {dnnl::cpu_isa::avx2_vnni, "avx2_vnni"},
      {dnnl::cpu_isa::avx2, "avx2"},
      {dnnl::cpu_isa::avx, "avx"},
      {dnnl::cpu_isa::sse41, "sse41"},
  };
  for (const Named& n : kIsas) {
    if (CpuHas(n.isa)) return n.name;
  }
  return "no vector extension oneDNN uses";
}

void CheckPrecisionOn(Precision precision, DeviceType device) {
  const bool cpu = device == DeviceType::kCPU;
  switch (precision) {
    case Precision::kFP32:
      return;
    case Precision::kBF16:
      CROSSBOW_ENFORCE_VALUE(!cpu || CpuHasBf16(),
                             "precision bf16 (--precision) needs a CPU with AVX512-BF16 or AMX; "
                             "oneDNN finds ",
                             CpuIsaName(), " here: use fp32");
      return;
    case Precision::kTF32:
      CROSSBOW_ENFORCE_VALUE(!cpu,
                             "precision tf32 (--precision) is a GPU math mode; on a CPU use fp32 "
                             "or bf16");
      return;
    case Precision::kFP16:
      CROSSBOW_ENFORCE_VALUE(!cpu,
                             "precision fp16 (--precision) runs on GPUs only; on a CPU use bf16 "
                             "(AVX512-BF16 or AMX) or fp32");
      return;
  }
}

}  // namespace crossbow
