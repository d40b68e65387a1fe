// Building a Metrics record from saved profiler artifacts, so users can profile on a cluster
// node and analyse anywhere (`kernelpro collect`).
#pragma once

#include <string>

#include "profile/metrics.h"

namespace kernelpro::profile {

// Paths of saved artifacts; an empty path means "not available".
struct ArtifactPaths {
  std::string ncu_csv;    // ncu --csv --page raw --print-units base
  std::string sass;       // cuobjdump --dump-sass
  std::string res_usage;  // cuobjdump -res-usage
  std::string symbols;    // cuobjdump -symbols
  std::string nm;         // nm -D of the built .so
  std::string trace;      // PyTorch profiler Chrome trace (.json) or nsys SQLite export (.sqlite)

  bool empty() const {
    return ncu_csv.empty() && sass.empty() && res_usage.empty() && symbols.empty() && nm.empty() &&
           trace.empty();
  }
};

// DIR/NAME.ncu.csv, NAME.sass.txt, NAME.resusage.txt, NAME.symbols.txt, NAME.nm.txt,
// NAME.trace.json (or NAME.nsys.sqlite), each only where the file exists.
ArtifactPaths ArtifactsIn(const std::string& dir, const std::string& name);

// Parses every artifact given. A missing or unparsable one leaves its view empty and a note;
// the ncu view keeps only the candidate's entry kernels when the symbols are known.
Metrics CollectFromArtifacts(const ArtifactPaths& paths);

// The same from texts already in memory (what `kernelpro profile` has after running the tools).
struct ArtifactTexts {
  std::string ncu_csv, sass, res_usage, symbols, nm;
};
Metrics CollectFromTexts(const ArtifactTexts& texts);

// A short human-readable rendering of the record: per-kernel ncu numbers, SASS highlights,
// timeline summary, notes.
std::string RenderMetrics(const Metrics& metrics);

}  // namespace kernelpro::profile
