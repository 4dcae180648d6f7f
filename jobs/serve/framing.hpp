// The wire format of `warpsim serve`: a 4-byte big-endian length, then that many bytes of one serialized
// protobuf message (experiment/spec/service.proto).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace warpsim::serve {

inline constexpr std::size_t kHeaderBytes = 4;
inline constexpr std::uint32_t kDefaultMaxMessageBytes = 1u << 20;

inline std::array<unsigned char, kHeaderBytes> encode_length(std::uint32_t n) {
  return {static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
          static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
}

inline std::uint32_t decode_length(const std::array<unsigned char, kHeaderBytes>& h) {
  return (std::uint32_t{h[0]} << 24) | (std::uint32_t{h[1]} << 16) | (std::uint32_t{h[2]} << 8) | h[3];
}

// Header + payload in one buffer.
inline std::string frame(const std::string& payload) {
  const auto h = encode_length(static_cast<std::uint32_t>(payload.size()));
  return std::string(h.begin(), h.end()) + payload;
}

}  // namespace warpsim::serve
