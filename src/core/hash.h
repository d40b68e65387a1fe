// SHA-256 of bytes as lowercase hex (OpenSSL). One place for every content hash kernelpro keeps:
// cassette request fingerprints, candidate sources in the run store, SigV4 payload hashes.
// Pure; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace kernelpro {

std::string Sha256Hex(std::string_view data);

}  // namespace kernelpro
