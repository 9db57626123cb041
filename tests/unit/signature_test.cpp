// Kernel signatures read from source text, template instance names, and parameter types.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "programs/signature.hpp"

using namespace iris::programs;

namespace {

const KernelSignature& find(const std::vector<KernelSignature>& all, const std::string& name) {
  for (const auto& k : all) {
    if (k.name == name) return k;
  }
  FAIL("no kernel " << name);
  throw;
}

}  // namespace

TEST_CASE("IRIS_EARLY_START before a kernel's name marks it as starting early", "[unit][signature]") {
  const std::string source = R"SRC(
__global__ void IRIS_EARLY_START __launch_bounds__(544, 1) early(const void* p, long n) {}
__global__ void __launch_bounds__(256) late(float* x) { /* IRIS_EARLY_START in a comment */ }
__global__ void plain(int n) { const char* s = "IRIS_EARLY_START"; }
)SRC";
  const auto kernels = parse_source(source).kernels;
  REQUIRE(kernels.size() == 3);
  CHECK(find(kernels, "early").early_start);
  REQUIRE(find(kernels, "early").params.size() == 2);
  CHECK_FALSE(find(kernels, "late").early_start);
  CHECK_FALSE(find(kernels, "plain").early_start);
}

TEST_CASE("the parser finds kernels with their parameters, templates, namespaces and lines", "[unit][signature]") {
  const std::string source = R"SRC(// a comment mentioning __global__ void fake(int x)
#define NOT_A_KERNEL __global__ void macro_kernel(int)
/* __global__ void also_fake(float* p) */
__device__ float helper(float x) { return x; }

__global__ void put_ones(float* __restrict__ buf, int n, iris::Context ctx, int dst) {
  const char* s = "__global__ void in_a_string(int)";
  if (n > 0) { buf[0] = 1.0f; }
}

template <typename T, int Scale = 2>
__global__ void __launch_bounds__(256) scale(T* x, const unsigned long n) { x[0] *= Scale; }

namespace ops {
extern "C" {
__global__ void reset(uint64_t* flags, size_t count, bool all);
}
__global__ void reset(uint64_t* flags, size_t count, bool all) {}
}
__global__ void no_params(void) {}
__global__ void unnamed(float*, int) {}
__global__ void arrays(float values[], iris::half h) {}
)SRC";
  const auto kernels = parse_source(source).kernels;
  REQUIRE(kernels.size() == 6);

  const auto& put = find(kernels, "put_ones");
  CHECK_FALSE(put.is_template);
  CHECK(put.line == 6);
  REQUIRE(put.params.size() == 4);
  CHECK(put.params[0].type == "float* __restrict__");
  CHECK(put.params[0].name == "buf");
  CHECK(put.params[2].type == "iris::Context");
  CHECK(put.params[2].name == "ctx");

  const auto& scale = find(kernels, "scale");
  CHECK(scale.is_template);
  CHECK(scale.line == 12);
  REQUIRE(scale.template_params.size() == 2);
  CHECK(scale.template_params[0].name == "T");
  CHECK(scale.template_params[0].is_type);
  CHECK(scale.template_params[1].name == "Scale");
  CHECK_FALSE(scale.template_params[1].is_type);
  CHECK(scale.template_params[1].default_value == "2");
  CHECK(scale.params[1].type == "const unsigned long");

  const auto& reset = find(kernels, "ops::reset");  // declared, then defined: once
  CHECK(reset.params.size() == 3);
  CHECK(find(kernels, "no_params").params.empty());
  const auto& unnamed = find(kernels, "unnamed");
  CHECK(unnamed.params[0].name == "arg1");
  CHECK(unnamed.params[1].name == "arg2");
  const auto& arrays = find(kernels, "arrays");
  CHECK(arrays.params[0].type == "float*");
  CHECK(arrays.params[0].name == "values");
}

TEST_CASE("template instance names have one canonical spelling", "[unit][signature]") {
  CHECK(parse_instance_name("scale< float ,4 >").canonical() == "scale<float, 4>");
  CHECK(parse_instance_name("ns::scale<const  float *, vec<int, 2> >").canonical() == "ns::scale<const float*, vec<int, 2>>");
  CHECK(parse_instance_name("put_ones").canonical() == "put_ones");
  const auto name = parse_instance_name("scale<float,4>");
  CHECK(name.base == "scale");
  CHECK(name.args == std::vector<std::string>{"float", "4"});
  CHECK_THROWS_WITH(parse_instance_name("scale<float"), Catch::Contains("is not a kernel name"));
  CHECK_THROWS_WITH(parse_instance_name("3x"), Catch::Contains("is not a kernel name"));
}

TEST_CASE("template arguments substitute into parameter types, defaults and aliases included", "[unit][signature]") {
  const std::map<std::string, std::string> none;
  const std::map<std::string, std::string> t_half = {{"T", "iris::half"}};
  ParamType p = classify_param("const T* __restrict__", t_half, none);
  CHECK(p.kind == ParamKind::pointer);
  CHECK(p.dtype == "float16");
  CHECK(p.spelled == "const iris::half* __restrict__");

  const auto aliases = parse_source("typedef unsigned long long counter_t;\nusing real = double;\n").aliases;
  CHECK(classify_param("real", none, aliases).kind == ParamKind::floating);
  CHECK(classify_param("real", none, aliases).ctype == "double");
  CHECK(classify_param("counter_t*", none, aliases).dtype == "uint64");
  // A template parameter standing for an alias: both resolve.
  CHECK(classify_param("T*", {{"T", "real"}}, aliases).dtype == "float64");
}

TEST_CASE("object-like macros name parameter types as aliases do", "[unit][signature]") {
  const std::map<std::string, std::string> none;
  const auto aliases = parse_source(
                           "#define PTR int*\n"
                           "#  define REAL \\\n"
                           "     double\n"
                           "#define GONE float\n"
                           "#undef GONE\n"
                           "#define SQUARE(x) ((x) * (x))\n"
                           "__global__ void k(PTR p, REAL r) {}\n")
                           .aliases;
  ParamType p = classify_param("PTR", none, aliases);
  CHECK(p.kind == ParamKind::pointer);
  CHECK(p.dtype == "int32");
  CHECK(classify_param("REAL", none, aliases).ctype == "double");  // continued on the next line
  CHECK(aliases.count("GONE") == 0);
  CHECK(aliases.count("SQUARE") == 0);  // function-like: not a type
}

TEST_CASE("parameter types map to the dtypes and argument slots Lua uses", "[unit][signature]") {
  const std::map<std::string, std::string> none;
  struct Case {
    const char* type;
    ParamKind kind;
    const char* dtype;
    const char* ctype;
  };
  const Case cases[] = {
      {"float*", ParamKind::pointer, "float32", "void*"},
      {"const double*", ParamKind::pointer, "float64", "void*"},
      {"int8_t*", ParamKind::pointer, "int8", "void*"},
      {"unsigned char*", ParamKind::pointer, "uint8", "void*"},
      {"short*", ParamKind::pointer, "int16", "void*"},
      {"int*", ParamKind::pointer, "int32", "void*"},
      {"unsigned*", ParamKind::pointer, "uint32", "void*"},
      {"long long*", ParamKind::pointer, "int64", "void*"},
      {"std::uint64_t*", ParamKind::pointer, "uint64", "void*"},
      {"__half*", ParamKind::pointer, "float16", "void*"},
      {"__nv_bfloat16*", ParamKind::pointer, "bfloat16", "void*"},
      {"iris::bfloat16*", ParamKind::pointer, "bfloat16", "void*"},
      {"bool*", ParamKind::pointer, "bool", "void*"},
      {"float4*", ParamKind::pointer, "float32", "void*"},
      {"void*", ParamKind::pointer, "", "void*"},
      {"const void* __restrict__", ParamKind::pointer, "", "void*"},
      {"int", ParamKind::integer, "int32", "int32_t"},
      {"unsigned int", ParamKind::integer, "uint32", "uint32_t"},
      {"size_t", ParamKind::integer, "uint64", "uint64_t"},
      {"const long", ParamKind::integer, "int64", "int64_t"},
      {"uint16_t", ParamKind::integer, "", "uint16_t"},
      {"float", ParamKind::floating, "float32", "float"},
      {"double", ParamKind::floating, "float64", "double"},
      {"iris::half", ParamKind::float16, "float16", "uint16_t"},
      {"__hip_bfloat16", ParamKind::bfloat16, "bfloat16", "uint16_t"},
      {"bool", ParamKind::boolean, "bool", "bool"},
      {"iris::Context", ParamKind::context, "", "iris_context_data"},
      {"const iris::Context", ParamKind::context, "", "iris_context_data"},
  };
  for (const Case& c : cases) {
    INFO(c.type);
    const ParamType p = classify_param(c.type, none, none);
    CHECK(p.kind == c.kind);
    CHECK(p.dtype == c.dtype);
    CHECK(p.ctype == c.ctype);
  }
  CHECK(classify_param("int8_t", none, none).min == -128);
  CHECK(classify_param("uint32_t", none, none).max == 4294967295.0);
}

TEST_CASE("parameter types Lua cannot pass are refused with what to do instead", "[unit][signature]") {
  const std::map<std::string, std::string> none;
  CHECK_THAT(classify_param("float**", none, none).why_unsupported, Catch::Contains("pointer to pointer"));
  CHECK_THAT(classify_param("Particle*", none, none).why_unsupported, Catch::Contains("no tensor dtype matches 'Particle*'"));
  CHECK_THAT(classify_param("float4", none, none).why_unsupported, Catch::Contains("cannot be passed from Lua"));
  CHECK_THAT(classify_param("const float&", none, none).why_unsupported, Catch::Contains("cannot be passed from Lua"));
}
