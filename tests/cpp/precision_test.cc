#include "crossbow/core/precision.h"

#include <gtest/gtest.h>

#include "crossbow/core/enforce.h"
#include "crossbow/engine/engine.h"
#include "crossbow/train/trainer_options.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::testing {
namespace {

TEST(Precision, NamesRoundTripAndAnUnknownNameGetsADidYouMean) {
  for (const std::string& name : PrecisionNames())
    EXPECT_EQ(PrecisionName(ParsePrecision(name)), name);
  EXPECT_ERROR(ParsePrecision("bf61"), ValueError, "did you mean 'bf16'?");
  EXPECT_ERROR(ParsePrecision("fp8"), ValueError, "fp32, bf16, tf32 or fp16");
}

TEST(Precision, Fp32AndBf16RunEverywhereTf32AndFp16OnlyOnGpus) {
  for (Precision p : {Precision::kFP32, Precision::kBF16, Precision::kTF32, Precision::kFP16})
    EXPECT_NO_THROW(CheckPrecisionOn(p, DeviceType::kCUDA)) << PrecisionName(p);
  EXPECT_NO_THROW(CheckPrecisionOn(Precision::kFP32, DeviceType::kCPU));
  EXPECT_ERROR(CheckPrecisionOn(Precision::kTF32, DeviceType::kCPU), ValueError,
               "tf32 (--precision) is a GPU math mode");
  EXPECT_ERROR(CheckPrecisionOn(Precision::kFP16, DeviceType::kCPU), ValueError,
               "fp16 (--precision) runs on GPUs only; on a CPU use bf16");
}

// Where the CPU lacks the instructions, bf16 is refused with what oneDNN found instead; where
// it has them, it is accepted. Either way the engine's option check says the same.
TEST(Precision, Bf16IsAcceptedExactlyWhereTheCpuHasAvx512Bf16) {
  EngineOptions options;
  options.precision = "bf16";
  if (CpuHasBf16()) {
    EXPECT_NO_THROW(CheckPrecisionOn(Precision::kBF16, DeviceType::kCPU));
    EXPECT_NO_THROW(CheckEngineOptions(options));
    return;
  }
  for (const std::string& message :
       {ErrorOf([] { CheckPrecisionOn(Precision::kBF16, DeviceType::kCPU); }),
        ErrorOf([&] { CheckEngineOptions(options); })}) {
    EXPECT_NE(message.find("needs a CPU with AVX512-BF16 or AMX"), std::string::npos) << message;
    EXPECT_NE(message.find("oneDNN finds " + CpuIsaName()), std::string::npos) << message;
  }
}

TEST(Precision, IsAnEngineOptionWithTheTableRule) {
  EngineOptions options;
  options.precision = "fp8";
  EXPECT_ERROR(CheckEngineOptions(options), ValueError,
               "precision (--precision) must be fp32, bf16, tf32 or fp16, got 'fp8'");
  EXPECT_EQ(ParseEngineOptions(R"({"precision": "fp32"})").precision, "fp32");
}

}  // namespace
}  // namespace crossbow::testing
