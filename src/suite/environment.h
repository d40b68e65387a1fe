// What a suite's numbers were measured on, as found (kernelpro never locks clocks on its own):
// the GPU's name, driver, its current, application and maximum clocks and persistence mode from
// nvidia-smi, or the CPU's model on a CPU suite; stored with every task's result and printed with
// every report, so a number never travels without how it was measured.
#pragma once

#include <string>

#include "core/json_io.h"

namespace kernelpro::suite {

// `gpu`: an ordinal as --gpus gives it ("" = the default device, taken as the first visible one:
// CUDA_VISIBLE_DEVICES's first entry when set, else 0). On "cpu", the CPU's model and core count.
// Fields nvidia-smi cannot tell are left out; "error" says why when it could not run at all.
Json MeasurementEnvironment(const std::string& device, const std::string& gpu);

// One line for people: "NVIDIA H200, driver 580.95.05; clocks as found (not locked by
// kernelpro): SM 1980 MHz of max 1980, memory 3201 MHz, applications SM 1980 / memory 3201 MHz".
std::string EnvironmentLine(const Json& environment);

}  // namespace kernelpro::suite
