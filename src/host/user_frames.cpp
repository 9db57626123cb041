#include "host/user_frames.hpp"

#include <lua.hpp>

#include <cstring>

#include "core/error.hpp"

namespace iris::host {

bool is_iris_chunk(const char* source) {
  return std::strncmp(source, "=iris", 5) == 0 || std::strcmp(source, "=(host)") == 0;
}

namespace {
std::string frame_line(const lua_Debug& ar) {
  const std::string where =
      std::string(ar.short_src) + ":" + (ar.currentline > 0 ? std::to_string(ar.currentline) + ":" : "");
  if (*ar.namewhat != '\0') return format("%s in function '%s'", where.c_str(), ar.name);
  if (*ar.what == 'm') return where + " in main chunk";
  if (*ar.what == 'C') return where + " ?";
  return format("%s in function <%s:%d>", where.c_str(), ar.short_src, ar.linedefined);
}
}  // namespace

std::vector<StackFrame> stack_of(lua_State* L, int level, int outermost) {
  if (outermost < 0) outermost = lua_gettop(L) + outermost + 1;
  std::vector<StackFrame> frames;
  lua_Debug ar;
  for (; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, outermost != 0 ? "Slnf" : "Sln", &ar) == 0) continue;
    const bool c = *ar.what == 'C';
    frames.push_back({frame_line(ar), c, !c && is_iris_chunk(ar.source)});
    if (outermost != 0) {
      const bool last = lua_rawequal(L, -1, outermost) != 0;
      lua_pop(L, 1);
      if (last) break;
    }
  }
  return frames;
}

std::vector<StackFrame> user_frames(const std::vector<StackFrame>& stack, bool deliberate) {
  // The nearest Lua frame inside frame i (above: towards the innermost) and outside it (below).
  auto lua_frame = [&](size_t i, int step) -> const StackFrame* {
    for (long k = static_cast<long>(i) + step; k >= 0 && k < static_cast<long>(stack.size()); k += step) {
      if (!stack[k].c) return &stack[k];
    }
    return nullptr;
  };
  for (const StackFrame& f : stack) {
    if (f.c) continue;
    if (f.iris && !deliberate) return stack;
    break;
  }
  std::vector<StackFrame> kept;
  for (size_t i = 0; i < stack.size(); ++i) {
    bool keep = !stack[i].iris;
    if (keep && stack[i].c) {
      const StackFrame* above = lua_frame(i, -1);
      const StackFrame* below = lua_frame(i, +1);
      keep = below != nullptr && !below->iris && !(above != nullptr && above->iris);
    }
    if (keep) kept.push_back(stack[i]);
  }
  return kept;
}

}  // namespace iris::host
