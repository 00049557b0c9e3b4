#pragma once

#include <string>
#include <vector>

#include "crossbow/core/context.h"

namespace crossbow {

// Precision (declared in context.h, which holds one): the arithmetic of convolutions and fully
// connected layers, and on CPUs the type of activations between them. Weights, gradients of
// weights, momentum, the averaged model and batch-norm statistics stay fp32 in every precision.
//   fp32  exact single precision everywhere (the default)
//   bf16  CPUs with AVX512-BF16 or AMX, and GPUs: convolutions (and, on CPUs, fully connected
//         layers) read their input and weights (and, backwards, the output's gradient) as
//         bfloat16 and accumulate in fp32. On CPUs convolutions write Y and dX in bfloat16, and
//         batch norm, ReLU, pooling, the residual add, channel padding and reshapes pass
//         bfloat16 on as they get it (computing in fp32 inside), so a ResNet converts nothing
//         between its convolutions; fully connected layers and losses write fp32. On GPUs
//         convolutions write fp32, and matrix products use TF32 tensor cores
//   fp16  GPUs: as bf16 in IEEE half precision, whose range ends at 65504 and whose normal
//         numbers start at 6e-5, so each convolution's backward pass scales the output's
//         gradient by a power of two that brings its largest magnitude to [0.5, 1) and divides
//         the results by it again (loss scaling per tensor, exact, with no skipped steps)
//   tf32  GPUs (Ampere and newer): cuDNN and cuBLAS may use TF32 tensor cores
const std::vector<std::string>& PrecisionNames();  // fp32, bf16, tf32, fp16
const char* PrecisionName(Precision precision);
// ValueError with a did-you-mean for an unknown name.
Precision ParsePrecision(const std::string& name);

// Throws a ValueError saying why `precision` cannot run on a device of this type: bf16 on a CPU
// without AVX512-BF16 or AMX (naming what oneDNN finds instead), tf32 or fp16 on a CPU.
// A precision is never emulated on a slow path.
void CheckPrecisionOn(Precision precision, DeviceType device);

// Whether oneDNN finds AVX512-BF16 (or AMX, which includes it) on this CPU.
bool CpuHasBf16();

// Whether oneDNN finds AMX (bf16 tile products) on this CPU.
bool CpuHasAmx();

// Whether oneDNN uses AVX-512 (F, BW, VL, DQ) on this CPU: our own loops then run their AVX-512
// copy (crossbow/core/per_isa.h).
bool CpuHasAvx512();

// oneDNN's name for the widest instruction set it uses on this CPU ("avx2", "avx512_core_amx").
std::string CpuIsaName();

}  // namespace crossbow
