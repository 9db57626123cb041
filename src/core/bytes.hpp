// Little-endian records of fixed-size integers and length-prefixed strings: the kernel cache's entries
// and a failed job's trace parts (files this program writes and reads back itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace iris::bytes {

inline void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put_u64(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

// Reads what put_* wrote, from `at`: each read returns false, changing nothing more, when the bytes
// end too soon (a file cut short or damaged).
struct Reader {
  const std::vector<uint8_t>& in;
  size_t at;

  bool u64(uint64_t* v) {
    if (in.size() - at < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= static_cast<uint64_t>(in[at + i]) << (8 * i);
    at += 8;
    return true;
  }
  bool string(std::string* s) {
    uint64_t n = 0;
    if (!u64(&n) || in.size() - at < n) return false;
    s->assign(in.begin() + at, in.begin() + at + n);
    at += n;
    return true;
  }
  size_t left() const { return in.size() - at; }
};

}  // namespace iris::bytes
