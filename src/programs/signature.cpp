#include "programs/signature.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "iris/impl/abi.h"

namespace iris::programs {
namespace {

struct Token {
  std::string text;
  int line = 0;
  bool word = false;    // identifier or number
  bool string = false;  // a string literal (contents dropped)
};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident(const Token& t) { return t.word && is_ident_start(t.text[0]); }

// Records an object-like macro of a preprocessor line ("#define PTR int*", "# define N 4"), so that a
// parameter type spelled with it resolves; "#undef NAME" forgets it. Function-like macros are left out.
void note_macro(const std::string& directive, std::map<std::string, std::string>* macros) {
  size_t i = directive.find_first_not_of(" \t", 1);
  if (i == std::string::npos) return;
  const bool define = directive.compare(i, 6, "define") == 0;
  const bool undef = directive.compare(i, 5, "undef") == 0;
  if (!define && !undef) return;
  i = directive.find_first_not_of(" \t", i + (define ? 6 : 5));
  if (i == std::string::npos || !is_ident_start(directive[i])) return;
  size_t end = i;
  while (end < directive.size() && is_ident_char(directive[end])) ++end;
  const std::string name = directive.substr(i, end - i);
  if (undef) {
    macros->erase(name);
    return;
  }
  if (end < directive.size() && directive[end] == '(') return;  // a function-like macro
  (*macros)[name] = directive.substr(end);
}

// C++ tokens, without comments, preprocessor lines and literal contents: enough to find declarations.
// `macros`, when given, collects the object-like macros the preprocessor lines define.
std::vector<Token> tokenize(const std::string& s, std::map<std::string, std::string>* macros = nullptr) {
  std::vector<Token> out;
  int line = 1;
  bool line_start = true;
  const size_t n = s.size();
  size_t i = 0;
  auto skip_to_line_end = [&] {
    while (i < n && s[i] != '\n') {
      if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
        ++line;
        i += 2;
        continue;
      }
      ++i;
    }
  };
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#' && line_start) {
      const size_t start = i;
      skip_to_line_end();
      if (macros != nullptr) {
        std::string directive = s.substr(start, i - start);
        for (size_t k = directive.find("\\\n"); k != std::string::npos; k = directive.find("\\\n", k)) {
          directive.replace(k, 2, " ");
        }
        note_macro(directive, macros);
      }
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      skip_to_line_end();
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') ++line;
        ++i;
      }
      i += 2;
      continue;
    }
    if (c == '"' || c == '\'') {
      const int start_line = line;
      ++i;
      while (i < n && s[i] != c) {
        if (s[i] == '\\') ++i;
        if (i < n && s[i] == '\n') ++line;
        ++i;
      }
      ++i;
      out.push_back({c == '"' ? "\"\"" : "''", start_line, false, c == '"'});
      continue;
    }
    if (is_ident_char(c)) {
      size_t j = i;
      while (j < n && (is_ident_char(s[j]) || (std::isdigit(static_cast<unsigned char>(c)) && (s[j] == '.' || s[j] == '\''))))
        ++j;
      out.push_back({s.substr(i, j - i), line, true, false});
      i = j;
      continue;
    }
    if (c == ':' && i + 1 < n && s[i + 1] == ':') {
      out.push_back({"::", line, false, false});
      i += 2;
      continue;
    }
    out.push_back({std::string(1, c), line, false, false});
    ++i;
  }
  return out;
}

// Index of the token closing the bracket at `open` (same kind), or tokens.size().
size_t matching(const std::vector<Token>& t, size_t open) {
  const std::string o = t[open].text;
  const std::string c = o == "(" ? ")" : o == "[" ? "]" : o == "{" ? "}" : ">";
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i].text == o) ++depth;
    if (t[i].text == c && --depth == 0) return i;
    // Inside <...>, parentheses hide their own '<' and '>' (e.g. default values like (1 < 2)).
    if (o == "<" && t[i].text == "(") i = matching(t, i);
  }
  return t.size();
}

// Splits tokens [begin, end) at commas outside any brackets.
std::vector<std::vector<Token>> split_top_level(const std::vector<Token>& t, size_t begin, size_t end) {
  std::vector<std::vector<Token>> parts(1);
  int depth = 0;
  for (size_t i = begin; i < end; ++i) {
    const std::string& x = t[i].text;
    if (x == "(" || x == "[" || x == "{" || x == "<") ++depth;
    if (x == ")" || x == "]" || x == "}" || x == ">") --depth;
    if (x == "," && depth == 0) {
      parts.emplace_back();
      continue;
    }
    parts.back().push_back(t[i]);
  }
  if (parts.size() == 1 && parts[0].empty()) parts.clear();
  return parts;
}

std::string join(const std::vector<Token>& tokens) {
  std::string out;
  const Token* prev = nullptr;
  for (const Token& t : tokens) {
    if (prev != nullptr &&
        ((prev->word && t.word) || prev->text == "," || ((prev->text == "*" || prev->text == "&") && t.word))) {
      out += ' ';
    }
    out += t.text;
    prev = &t;
  }
  return out;
}

// Drops "= default" from a parameter's tokens; returns the default's text.
std::string take_default(std::vector<Token>& tokens) {
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& x = tokens[i].text;
    if (x == "(" || x == "[" || x == "{" || x == "<") ++depth;
    if (x == ")" || x == "]" || x == "}" || x == ">") --depth;
    if (x == "=" && depth == 0) {
      std::string value = join(std::vector<Token>(tokens.begin() + static_cast<long>(i) + 1, tokens.end()));
      tokens.resize(i);
      return value;
    }
  }
  return "";
}

const std::set<std::string>& type_words() {
  static const std::set<std::string> words = {"int",    "char",     "short",       "long",       "unsigned",
                                              "signed", "float",    "double",      "bool",       "void",
                                              "const",  "volatile", "__restrict__", "__restrict", "restrict"};
  return words;
}

std::vector<TemplateParam> parse_template_params(const std::vector<Token>& t, size_t open, size_t close) {
  std::vector<TemplateParam> params;
  for (std::vector<Token> part : split_top_level(t, open + 1, close)) {
    TemplateParam p;
    p.default_value = take_default(part);
    if (part.empty()) continue;
    p.is_type = part[0].text == "typename" || part[0].text == "class" || part[0].text == "template";
    for (auto it = part.rbegin(); it != part.rend(); ++it) {
      if (is_ident(*it) && it->text != "typename" && it->text != "class" && type_words().count(it->text) == 0) {
        p.name = it->text;
        break;
      }
    }
    params.push_back(p);
  }
  return params;
}

Param parse_param(std::vector<Token> tokens, size_t position) {
  take_default(tokens);
  Param p;
  // `float x[]` and `float x[4]` are pointers.
  if (!tokens.empty() && tokens.back().text == "]") {
    while (!tokens.empty() && tokens.back().text != "[") tokens.pop_back();
    if (!tokens.empty()) tokens.pop_back();
    tokens.push_back({"*", 0, false, false});
    std::swap(tokens[tokens.size() - 1], tokens[tokens.size() - 2]);  // name after the '*'
  }
  const bool named = tokens.size() >= 2 && is_ident(tokens.back()) && type_words().count(tokens.back().text) == 0 &&
                     tokens[tokens.size() - 2].text != "::";
  if (named) {
    p.name = tokens.back().text;
    tokens.pop_back();
  } else {
    p.name = "arg" + std::to_string(position + 1);
  }
  p.type = join(tokens);
  return p;
}

struct Scope {
  enum Kind { name_space, transparent, block } kind;
  std::string name;
};

std::string qualified(const std::vector<Scope>& scopes, const std::string& name) {
  std::string q;
  for (const Scope& s : scopes) {
    if (s.kind == Scope::name_space && !s.name.empty()) q += s.name + "::";
  }
  return q + name;
}

// Parses the kernel whose __global__ is at `g`; returns the index of its closing ')' (or g).
size_t parse_kernel(const std::vector<Token>& t, size_t g, const std::vector<Scope>& scopes,
                    const std::vector<TemplateParam>* template_params, ParsedSource& walk) {
  size_t j = g + 1;
  bool early_start = false;
  for (; j < t.size(); ++j) {
    const std::string& x = t[j].text;
    if (x == ";" || x == "{" || x == "}") return g;
    if (x == "IRIS_EARLY_START") early_start = true;
    if ((x == "__launch_bounds__" || x == "__attribute__" || x == "alignas" || x == "__declspec") && j + 1 < t.size() &&
        t[j + 1].text == "(") {
      j = matching(t, j + 1);
      continue;
    }
    if (x == "[" && j + 1 < t.size() && t[j + 1].text == "[") {
      j = matching(t, j);
      continue;
    }
    if (x == "(") break;
  }
  if (j >= t.size() || j == 0 || !is_ident(t[j - 1])) return g;
  std::string name = t[j - 1].text;
  const int line = t[j - 1].line;
  for (size_t k = j - 1; k >= 2 && t[k - 1].text == "::" && is_ident(t[k - 2]); k -= 2) name = t[k - 2].text + "::" + name;
  const size_t close = matching(t, j);
  if (close >= t.size()) return g;

  KernelSignature k;
  k.name = qualified(scopes, name);
  k.line = line;
  k.early_start = early_start;
  if (template_params != nullptr) {
    k.is_template = true;
    k.template_params = *template_params;
  }
  const auto parts = split_top_level(t, j + 1, close);
  if (!(parts.size() == 1 && parts[0].size() == 1 && parts[0][0].text == "void")) {
    for (size_t i = 0; i < parts.size(); ++i) k.params.push_back(parse_param(parts[i], i));
  }
  bool seen = false;
  for (const KernelSignature& other : walk.kernels) seen = seen || other.name == k.name;
  if (!seen) walk.kernels.push_back(k);  // a declaration and its definition, once
  return close;
}

ParsedSource walk(const std::string& source) {
  ParsedSource out;
  const std::vector<Token> t = tokenize(source, &out.aliases);
  std::vector<Scope> scopes;
  std::vector<TemplateParam> pending_template;
  bool has_pending = false;
  auto at_namespace_scope = [&] {
    for (const Scope& s : scopes) {
      if (s.kind == Scope::block) return false;
    }
    return true;
  };
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& x = t[i].text;
    if (x == "namespace" && at_namespace_scope()) {
      std::string name;
      size_t j = i + 1;
      while (j < t.size() && (is_ident(t[j]) || t[j].text == "::")) name += t[j++].text;
      if (j < t.size() && t[j].text == "{") {
        scopes.push_back({Scope::name_space, name});
        i = j;
      }
      continue;
    }
    if (x == "extern" && i + 2 < t.size() && t[i + 1].string && t[i + 2].text == "{") {
      scopes.push_back({Scope::transparent, ""});
      i += 2;
      continue;
    }
    if (x == "{") {
      scopes.push_back({Scope::block, ""});
      has_pending = false;
      continue;
    }
    if (x == "}") {
      if (!scopes.empty()) scopes.pop_back();
      has_pending = false;
      continue;
    }
    if (x == ";") {
      has_pending = false;
      continue;
    }
    if (!at_namespace_scope()) continue;
    if (x == "template" && i + 1 < t.size() && t[i + 1].text == "<") {
      const size_t close = matching(t, i + 1);
      if (close >= t.size()) break;
      pending_template = parse_template_params(t, i + 1, close);
      has_pending = true;
      i = close;
      continue;
    }
    if (x == "__global__") {
      i = parse_kernel(t, i, scopes, has_pending ? &pending_template : nullptr, out);
      continue;
    }
    if (x == "typedef" || x == "using") {
      size_t end = i + 1;
      while (end < t.size() && t[end].text != ";" && t[end].text != "{") ++end;
      if (end >= t.size() || t[end].text != ";") continue;
      std::vector<Token> body(t.begin() + static_cast<long>(i) + 1, t.begin() + static_cast<long>(end));
      if (x == "using" && body.size() >= 3 && is_ident(body[0]) && body[1].text == "=") {
        out.aliases[body[0].text] = join(std::vector<Token>(body.begin() + 2, body.end()));
      } else if (x == "typedef" && body.size() >= 2 && is_ident(body.back())) {
        const std::string alias = body.back().text;
        body.pop_back();
        out.aliases[alias] = join(body);
      }
      i = end;
    }
  }
  return out;
}

// ---- parameter types --------------------------------------------------------------------------------

struct Scalar {
  const char* dtype;  // tensor dtype, "" when no dtype matches (uint16)
  const char* ctype;
  ParamKind kind;
  double min, max;
  size_t bytes;  // sizeof(ctype)
};

const double k2p63 = 9223372036854775808.0;

const std::map<std::string, Scalar>& named_scalars() {
  static const std::map<std::string, Scalar> m = {
      {"bool", {"bool", "bool", ParamKind::boolean, 0, 1, sizeof(bool)}},
      {"int8_t", {"int8", "int8_t", ParamKind::integer, -128, 127, 1}},
      {"uint8_t", {"uint8", "uint8_t", ParamKind::integer, 0, 255, 1}},
      {"int16_t", {"int16", "int16_t", ParamKind::integer, -32768, 32767, 2}},
      {"uint16_t", {"", "uint16_t", ParamKind::integer, 0, 65535, 2}},
      {"int32_t", {"int32", "int32_t", ParamKind::integer, -2147483648.0, 2147483647.0, 4}},
      {"uint32_t", {"uint32", "uint32_t", ParamKind::integer, 0, 4294967295.0, 4}},
      {"int64_t", {"int64", "int64_t", ParamKind::integer, -k2p63, k2p63, 8}},
      {"uint64_t", {"uint64", "uint64_t", ParamKind::integer, 0, 2 * k2p63, 8}},
      {"float", {"float32", "float", ParamKind::floating, 0, 0, 4}},
      {"double", {"float64", "double", ParamKind::floating, 0, 0, 8}},
      {"half", {"float16", "uint16_t", ParamKind::float16, 0, 0, 2}},
      {"bfloat16", {"bfloat16", "uint16_t", ParamKind::bfloat16, 0, 0, 2}},
  };
  return m;
}

// Other spellings of the types above.
const std::map<std::string, std::string>& synonyms() {
  static const std::map<std::string, std::string> m = {
      {"size_t", "uint64_t"},   {"ptrdiff_t", "int64_t"}, {"intptr_t", "int64_t"},  {"uintptr_t", "uint64_t"},
      {"ssize_t", "int64_t"},   {"__half", "half"},       {"_Float16", "half"},     {"__nv_bfloat16", "bfloat16"},
      {"__hip_bfloat16", "bfloat16"}, {"hip_bfloat16", "bfloat16"},
  };
  return m;
}

// Vector types a pointer may name: they take a tensor of their element type.
const std::map<std::string, std::string>& vector_element() {
  static const std::map<std::string, std::string> m = {
      {"float2", "float32"}, {"float4", "float32"},   {"double2", "float64"},   {"int2", "int32"},
      {"int4", "int32"},     {"uint2", "uint32"},     {"uint4", "uint32"},      {"char4", "int8"},
      {"uchar4", "uint8"},   {"longlong2", "int64"},  {"ulonglong2", "uint64"},
  };
  return m;
}

// "unsigned long int" -> "uint64_t"; "" when the words are not an integer/char type.
std::string fundamental_integer(const std::vector<std::string>& words) {
  int longs = 0;
  bool is_unsigned = false, is_char = false, is_short = false;
  for (const std::string& w : words) {
    if (w == "long") ++longs;
    else if (w == "unsigned") is_unsigned = true;
    else if (w == "char") is_char = true;
    else if (w == "short") is_short = true;
    else if (w != "int" && w != "signed") return "";
  }
  if (is_char) return is_unsigned ? "uint8_t" : "int8_t";  // plain char is signed on the hosts iris runs on
  if (is_short) return is_unsigned ? "uint16_t" : "int16_t";
  if (longs > 0) return is_unsigned ? "uint64_t" : "int64_t";  // LP64: long is 64-bit
  return is_unsigned ? "uint32_t" : "int32_t";
}

std::string strip_prefix(std::string name) {
  for (const char* prefix : {"::", "std::", "iris::"}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  }
  return name;
}

}  // namespace

ParsedSource parse_source(const std::string& source) { return walk(source); }

std::string InstanceName::canonical() const {
  if (!has_args) return base;
  std::string out = base + "<";
  for (size_t i = 0; i < args.size(); ++i) out += (i > 0 ? ", " : "") + args[i];
  return out + ">";
}

InstanceName parse_instance_name(const std::string& text) {
  const std::vector<Token> t = tokenize(text);
  InstanceName name;
  size_t i = 0;
  while (i < t.size() && (is_ident(t[i]) || t[i].text == "::")) name.base += t[i++].text;
  if (name.base.empty() || !is_ident(t[i - 1])) {
    throw Error(Errc::invalid_argument, "'" + text + "' is not a kernel name: write NAME or NAME<template arguments>");
  }
  if (i == t.size()) return name;
  const size_t close = t[i].text == "<" ? matching(t, i) : t.size();
  if (close != t.size() - 1) {
    throw Error(Errc::invalid_argument,
                "'" + text + "' is not a kernel name: write NAME or NAME<template arguments>, e.g. scale<float>");
  }
  name.has_args = true;
  for (const auto& part : split_top_level(t, i + 1, close)) name.args.push_back(join(part));
  return name;
}

ParamType classify_param(const std::string& type, const std::map<std::string, std::string>& substitutions,
                         const std::map<std::string, std::string>& aliases) {
  // Substitute template parameters and aliases (aliases may name aliases: a few rounds).
  std::vector<Token> tokens = tokenize(type);
  for (int round = 0; round < 8; ++round) {
    std::vector<Token> next;
    bool changed = false;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const Token& tok = tokens[i];
      const bool qualified_member = i > 0 && tokens[i - 1].text == "::";
      auto sub = substitutions.find(tok.text);
      auto alias = aliases.find(tok.text);
      const std::string* replacement = nullptr;
      if (is_ident(tok) && !qualified_member && sub != substitutions.end()) replacement = &sub->second;
      else if (is_ident(tok) && !qualified_member && alias != aliases.end()) replacement = &alias->second;
      if (replacement != nullptr) {
        for (const Token& r : tokenize(*replacement)) next.push_back(r);
        changed = true;
      } else {
        next.push_back(tok);
      }
    }
    tokens = next;
    if (!changed) break;
  }

  ParamType out;
  out.spelled = join(tokens);
  // Qualifiers do not change what is passed.
  std::vector<Token> core;
  for (const Token& tok : tokens) {
    if (tok.text == "const" || tok.text == "volatile" || tok.text == "__restrict__" || tok.text == "__restrict" ||
        tok.text == "restrict" || tok.text == "struct" || tok.text == "class" || tok.text == "typename" ||
        tok.text == "__grid_constant__") {
      continue;
    }
    core.push_back(tok);
  }
  int pointers = 0;
  while (!core.empty() && core.back().text == "*") {
    ++pointers;
    core.pop_back();
  }
  for (const Token& tok : core) {
    if (tok.text == "&" || tok.text == "*" || tok.text == "[" || tok.text == "(") {
      out.why_unsupported = "a kernel parameter of type '" + out.spelled +
                            "' cannot be passed from Lua: use a pointer (tensor), a number, a boolean or iris::Context";
      return out;
    }
  }
  std::vector<std::string> words;
  for (const Token& tok : core) words.push_back(tok.text);
  std::string base;
  for (const Token& tok : core) base += tok.text;  // "iris::half", "unsignedlong" (only used for names)
  base = strip_prefix(base);
  if (auto s = synonyms().find(base); s != synonyms().end()) base = s->second;
  const std::string integer = fundamental_integer(words);
  if (!integer.empty()) base = integer;

  if (pointers > 1) {
    out.why_unsupported = "a kernel parameter of type '" + out.spelled + "' (pointer to pointer) cannot be passed from Lua";
    return out;
  }
  if (pointers == 1) {
    out.kind = ParamKind::pointer;
    out.ctype = "void*";
    out.bytes = sizeof(void*);
    if (base == "void") return out;  // any tensor
    if (auto s = named_scalars().find(base); s != named_scalars().end() && *s->second.dtype != '\0') {
      out.dtype = s->second.dtype;
      return out;
    }
    if (auto v = vector_element().find(base); v != vector_element().end()) {
      out.dtype = v->second;
      return out;
    }
    out.kind = ParamKind::unsupported;
    out.why_unsupported = "no tensor dtype matches '" + out.spelled +
                          "': use a pointer to the tensor's element type (float*, int32_t*, iris::half*, ...) or void*";
    return out;
  }
  if (base == "Context" || base == "abi::ContextData") {
    out.kind = ParamKind::context;
    out.ctype = "iris_context_data";
    out.bytes = sizeof(abi::ContextData);
    return out;
  }
  // A TMA descriptor (gemm.hpp): 128 bytes by value, which Lua passes as an iris_tensor_map cdata.
  if (base == "gemm::TensorMap" || base == "TensorMap" || base == "abi::TensorMapData" || base == "iris_tensor_map") {
    out.kind = ParamKind::tensor_map;
    out.ctype = "iris_tensor_map";
    out.bytes = sizeof(abi::TensorMapData);
    return out;
  }
  if (auto s = named_scalars().find(base); s != named_scalars().end()) {
    out.kind = s->second.kind;
    out.ctype = s->second.ctype;
    out.bytes = s->second.bytes;
    out.dtype = s->second.dtype;
    out.min = s->second.min;
    out.max = s->second.max;
    return out;
  }
  out.why_unsupported = "a kernel parameter of type '" + out.spelled +
                        "' cannot be passed from Lua: use a pointer (tensor), a number, a boolean, iris::Context or "
                        "iris::gemm::TensorMap";
  return out;
}

}  // namespace iris::programs
