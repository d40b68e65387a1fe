// Building: the extension point that turns a candidate's source into what its process loads
// (class Builder), the production builder, and the build pool that runs a batch's builds.
//
// The production builder (MakeWorkerBuilder) compiles a candidate's extensions by the worker's
// sandboxed `build` step into the candidate's own build scope (CACHE/builds/<hash of its source>:
// a candidate can only poison builds that its identical source loads), or finds them there from
// an earlier build: a record beside the scope (where no sandboxed process can write) names its
// shared objects, so a source built before costs no process. A build that needs a process is
// offered the precompiled headers (EvalContext::headers_for_builds; the first such build waits for
// their step). A built candidate is provisionally correct: it built and imports; the device steps
// decide the rest. A Builder knows nothing of the executor: it gets what it needs as an
// EvalContext (eval_context.h), so a test may hand the executor a fake one (Executor::set_builder).
//
// Threading: Builder::Build may run on several threads at once; each production build gets a
// share of the cores for its compiler jobs (cores / jobs). BuildAll is the build pool: it runs the
// batch's builds on `jobs` threads at once (core/parallel.h), taking the candidates in order as
// threads free up, and returns when all are done; it touches no device, so an evaluation runs it
// beside its reference step.
#pragma once

#include <memory>
#include <string>

#include "eval/candidate_step.h"
#include "eval/eval_context.h"
#include "eval/verdict.h"

namespace kernelpro::eval {

// Whether a candidate's source compiles a C++/CUDA extension through torch's cpp_extension
// (load_inline, load, CUDAExtension...): only such a build waits for the precompiled headers.
// A source that names neither `cpp_extension` nor `load_inline` (pure PyTorch, Triton) is built
// without them, so a suite of such candidates never pays the pch step (about 90 s on an H100
// host, for nothing); one that builds an extension by another path is still built, as text.
bool BuildsTorchExtension(const std::string& source);

class Builder {
 public:
  virtual ~Builder() = default;
  // Builds `candidate` (a path) into `result`: its shared objects, build time, whether it was
  // cached, notes and diagnostics; its status kCorrect when it built, else its verdict. A failed
  // build is the result's, never an error of the call.
  virtual void Build(const EvalContext& context, const std::string& candidate,
                     EvalResult& result) = 0;
};

// The production builder: the worker's `build` step, cached per source (the paragraph above).
std::shared_ptr<Builder> MakeWorkerBuilder();

// Builds every candidate of `batch` still in the running with `builder`, each reported as its
// "building" step; one that fails leaves the running. An item with no step left (a failed build,
// or any build with options.build_only) is finished in the progress.
void BuildAll(Builder& builder, const EvalContext& context, CandidateBatch& batch);

}  // namespace kernelpro::eval
