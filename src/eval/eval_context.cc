#include "eval/eval_context.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "core/hash.h"
#include "eval/candidate_step.h"

namespace kernelpro::eval {

EvalContext::EvalContext(WorkerClient worker_client, EvalOptions eval_options)
    : worker(std::move(worker_client)),
      options(std::move(eval_options)),
      base_request(BaseRequestOf(options)),
      gpu_pool(std::make_shared<GpuPool>(options.gpus)) {}

Json BaseRequestOf(const EvalOptions& options) {
  return Json{{"device", options.device},
              {"init_seed", options.init_seed},
              {"atol", options.atol},
              {"rtol", options.rtol}};
}

Json CandidateRequest(const EvalContext& context, const std::string& candidate,
                      const Json& reference) {
  const EvalOptions& options = context.options;
  std::ifstream in(candidate, std::ios::binary);
  if (!in) return Json();
  std::stringstream bytes;
  bytes << in.rdbuf();
  Json request = context.base_request;
  request["candidate"] = candidate;
  // One scope per source: a candidate can only poison builds that its identical source loads.
  request["build_root"] =
      AbsolutePath(options.cache_dir) + "/builds/" + Sha256Hex(bytes.str()).substr(0, 24);
  // Its builds of CUTLASS/CuTe code take their flags and include folders from this tree.
  if (!options.cutlass_include_dir.empty()) {
    request["cutlass"] = {{"include_dir", options.cutlass_include_dir},
                          {"version", options.cutlass_version}};
  }
  if (!reference.is_null()) {
    request["inputs_dir"] = JsonGet<std::string>(reference, "inputs_dir", "");
    request["inputs_manifest"] = JsonGet<Json>(reference, "inputs_manifest", Json::object());
    request["inputs_recipe"] = JsonGet<Json>(reference, "inputs_recipe", Json::object());
    request["reference"] =
        PickFields(reference, {"trials", "outputs", "output_aliases_input", "reference_ops"});
  }
  return request;
}

PrecompiledHeaders HeadersForBuilds(const EvalContext& context, std::vector<std::string>* notes) {
  if (!context.headers_for_builds) return PrecompiledHeaders();
  return context.headers_for_builds(notes);
}

PrecompiledHeaders PreparedHeaders(const EvalContext& context) {
  if (!context.prepared_headers) return PrecompiledHeaders();
  return context.prepared_headers();
}

}  // namespace kernelpro::eval
