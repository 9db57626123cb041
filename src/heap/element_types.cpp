#include "heap/element_types.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"

namespace iris::heap {
namespace {

struct TypeInfo {
  const char* name;
  ElementType type;
  size_t size;
  bool floating;
};

#define IRIS_HEAP_TYPE_INFO(name, code, bytes, kind) \
  {#name, static_cast<ElementType>(code), bytes, IRIS_HEAP_KIND_##kind},
#define IRIS_HEAP_KIND_bool false
#define IRIS_HEAP_KIND_int false
#define IRIS_HEAP_KIND_float true
constexpr TypeInfo kTypes[] = {IRIS_DTYPE_CODES(IRIS_HEAP_TYPE_INFO)};
#undef IRIS_HEAP_TYPE_INFO

// "bool, int8, ..., float64": what element_type_named's error lists.
#define IRIS_HEAP_TYPE_NAME(name, code, bytes, kind) ", " #name
constexpr const char* kTypeNames = IRIS_DTYPE_CODES(IRIS_HEAP_TYPE_NAME) + 2;
#undef IRIS_HEAP_TYPE_NAME

// Converts `value` (a double or an int64) to the element type, as a C cast would.
template <class T, class V>
void store_as(V value, void* out) {
  T v = static_cast<T>(value);
  std::memcpy(out, &v, sizeof v);
}

template <class V>
void store_value(ElementType type, V value, void* out) {
  switch (type) {
    case ElementType::boolean: store_as<uint8_t>(value != 0 ? 1 : 0, out); break;
    case ElementType::int8: store_as<int8_t>(value, out); break;
    case ElementType::uint8: store_as<uint8_t>(value, out); break;
    case ElementType::int16: store_as<int16_t>(value, out); break;
    case ElementType::int32: store_as<int32_t>(value, out); break;
    case ElementType::uint32: store_as<uint32_t>(value, out); break;
    case ElementType::int64: store_as<int64_t>(value, out); break;
    case ElementType::uint64: store_as<uint64_t>(value, out); break;
    case ElementType::float16: store_as<uint16_t>(float16_from_double(static_cast<double>(value)), out); break;
    case ElementType::bfloat16: store_as<uint16_t>(bfloat16_from_double(static_cast<double>(value)), out); break;
    case ElementType::float32: store_as<float>(value, out); break;
    case ElementType::float64: store_as<double>(value, out); break;
  }
}

}  // namespace

ElementType element_type_named(const std::string& name) {
  for (const TypeInfo& t : kTypes) {
    if (name == t.name) return t.type;
  }
  throw Error(Errc::invalid_argument, format("unknown dtype '%s' (dtypes: %s)", name.c_str(), kTypeNames));
}

size_t element_size(ElementType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t.size;
  }
  return 0;
}

bool is_floating(ElementType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t.floating;
  }
  return false;
}

void store_element(ElementType type, double value, void* out) { store_value(type, value, out); }
void store_element_int64(ElementType type, int64_t value, void* out) { store_value(type, value, out); }

}  // namespace iris::heap
