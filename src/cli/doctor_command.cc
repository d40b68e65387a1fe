// `kernelpro doctor`: checks what kernelpro needs on this machine and says how to fix what is
// missing (cli/doctor.h). Exit 0 when nothing failed, 1 when a check failed.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/doctor.h"
#include "cli/option_groups.h"
#include "cli/timing_selftest.h"

namespace kernelpro::cli {

CommandRunner RegisterDoctorCommand(CLI::App& app) {
  struct Args {
    DoctorOptions options;
    bool json = false;
    bool timing = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* doctor = app.add_subcommand(
      "doctor", "Check Python and torch, compilers, GPU, profilers, sandbox, API keys and cache");
  doctor->footer(
      "Each check is ok, warn (kernelpro works, with less: no GPU, no ncu) or fail (evaluation "
      "cannot run), with the fix. API keys are reported as set or not set, never shown. Exit 0 "
      "when nothing failed, 1 otherwise. --json prints {checks: [{name, status, detail, fix}], "
      "ok, warnings, failures}.");
  AddOption(*doctor, kJsonOption, args->json);
  AddOption(*doctor, kPythonOption, args->options.python);
  AddOption(*doctor, kCacheDirOption, args->options.cache_dir);
  doctor->add_flag("--timing", args->timing,
                   "Instead of the checks: time short kernels against the profiler and a "
                   "reference against itself on this GPU (about a minute); exit 1 when a check "
                   "fails");
  return [args] {
    if (args->timing) {
      auto result = RunTimingSelftest(args->options.python);
      if (!result.ok()) {
        std::cerr << "kernelpro doctor --timing: " << result.status().message() << "\n";
        return 2;
      }
      std::cout << (args->json ? DumpJson(*result, 1) + "\n" : RenderTimingSelftest(*result));
      return TimingSelftestExitCode(*result);
    }
    const std::vector<DoctorCheck> checks = RunDoctor(RealMachine(), args->options);
    if (args->json) {
      std::cout << DumpJson(DoctorJson(checks)) << "\n";
    } else {
      std::cout << RenderDoctorText(checks);
    }
    return DoctorExitCode(checks);
  };
}

}  // namespace kernelpro::cli
