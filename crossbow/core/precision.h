#pragma once

#include <string>
#include <vector>

#include "crossbow/core/context.h"

namespace crossbow {

// Precision (declared in context.h, which holds one): the arithmetic of convolutions (and, on
// GPUs, matrix products). Weights, momentum, the averaged model and batch-norm statistics stay
// fp32 in every precision; so do activations between operators.
//   fp32  exact single precision everywhere (the default)
//   bf16  CPUs with AVX512-BF16 or AMX: convolutions read their input and weights as bfloat16
//         and accumulate and write fp32
//   tf32  GPUs (Ampere and newer): cuDNN and cuBLAS may use TF32 tensor cores
const std::vector<std::string>& PrecisionNames();  // fp32, bf16, tf32
const char* PrecisionName(Precision precision);
// ValueError with a did-you-mean for an unknown name.
Precision ParsePrecision(const std::string& name);

// Throws a ValueError saying why `precision` cannot run on a device of this type: bf16 on a CPU
// without AVX512-BF16 or AMX (naming what oneDNN finds instead), tf32 on a CPU, bf16 on a GPU.
// A precision is never emulated on a slow path.
void CheckPrecisionOn(Precision precision, DeviceType device);

// Whether oneDNN finds AVX512-BF16 (or AMX, which includes it) on this CPU.
bool CpuHasBf16();

// oneDNN's name for the widest instruction set it uses on this CPU ("avx2", "avx512_core_amx").
std::string CpuIsaName();

}  // namespace crossbow
