// One candidate kernel the programmer proposed: what the search evaluates, profiles and keeps.
#pragma once

#include <string>

namespace kernelpro::agents {

struct Candidate {
  std::string strategy;  // the optimisation idea in a sentence
  std::string code;      // a complete Python file defining ModelNew
};

}  // namespace kernelpro::agents
