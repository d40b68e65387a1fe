// One prompt, ready to send: what the prompt builder (prompt_builder.h) assembles and the
// programmer (programmer.h) sends.
#pragma once

#include <string>
#include <vector>

namespace kernelpro::agents {

struct Prompt {
  std::string system;
  std::string user;
  std::vector<std::string> sections;  // component names in the order they appear
  std::vector<std::string> trimmed;   // components dropped or shortened to fit the size budget
};

}  // namespace kernelpro::agents
