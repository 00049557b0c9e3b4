// Caffe's Datum on the protobuf wire, by hand: every read is bounds-checked so that arbitrary
// bytes give an error, never a crash.
#include "data/datum.h"

#include <cstring>

namespace crossbow::data {
namespace {

enum WireType {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};
constexpr int kMaxGroupDepth = 64;

bool Fail(std::string* error, const std::string& why) {
  if (error != nullptr) *error = why;
  return false;
}

class WireReader {
 public:
  WireReader(const uint8_t* begin, size_t size) : pos_(begin), end_(begin + size) {}

  bool done() const { return pos_ == end_; }
  size_t offset(const uint8_t* base) const { return static_cast<size_t>(pos_ - base); }

  bool Varint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ == end_) return false;
      const uint8_t byte = *pos_++;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }

  bool Bytes(size_t count, const uint8_t** data) {
    if (count > static_cast<size_t>(end_ - pos_)) return false;
    *data = pos_;
    pos_ += count;
    return true;
  }

  bool LengthDelimited(const uint8_t** data, size_t* size) {
    uint64_t length;
    if (!Varint(&length) || length > static_cast<uint64_t>(end_ - pos_)) return false;
    *size = static_cast<size_t>(length);
    return Bytes(*size, data);
  }

  // Skips one field's value (the tag already read), groups included, as protobuf does.
  bool Skip(int wire_type, uint32_t field, int depth, std::string* error) {
    const uint8_t* ignored;
    size_t size;
    uint64_t varint;
    switch (wire_type) {
      case kVarint:
        return Varint(&varint) || Fail(error, "truncated varint");
      case kFixed64:
        return Bytes(8, &ignored) || Fail(error, "truncated fixed64");
      case kFixed32:
        return Bytes(4, &ignored) || Fail(error, "truncated fixed32");
      case kLengthDelimited:
        return LengthDelimited(&ignored, &size) || Fail(error, "truncated length-delimited field");
      case kStartGroup:
        if (depth >= kMaxGroupDepth) return Fail(error, "groups nested too deeply");
        while (true) {
          uint64_t tag;
          if (!Varint(&tag)) return Fail(error, "unterminated group");
          const int inner_type = static_cast<int>(tag & 7);
          const uint64_t inner_field = tag >> 3;
          if (inner_type == kEndGroup) {
            return inner_field == field || Fail(error, "mismatched end of group");
          }
          if (!Skip(inner_type, static_cast<uint32_t>(inner_field), depth + 1, error)) {
            return false;
          }
        }
      default:
        return Fail(error, "invalid wire type " + std::to_string(wire_type));
    }
  }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
};

float FloatAt(const uint8_t* p) {
  uint32_t bits = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                  static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void PutTag(int field, WireType type, std::string* out) { PutVarint(field << 3 | type, out); }

// int32 goes on the wire sign-extended to 64 bits, as protobuf writes it.
void PutInt32(int field, int32_t value, std::string* out) {
  PutTag(field, kVarint, out);
  PutVarint(static_cast<uint64_t>(static_cast<int64_t>(value)), out);
}

}  // namespace

bool ParseDatum(const void* bytes, size_t size, Datum* out, std::string* error) {
  const auto* base = static_cast<const uint8_t*>(bytes);
  if (base == nullptr && size != 0) return Fail(error, "null buffer");
  WireReader in(base, size);
  Datum datum;
  while (!in.done()) {
    const size_t at = in.offset(base);
    uint64_t tag;
    if (!in.Varint(&tag)) return Fail(error, "truncated tag at byte " + std::to_string(at));
    const uint64_t field = tag >> 3;
    const int type = static_cast<int>(tag & 7);
    if (field == 0 || field > 0x1fffffff) {
      return Fail(error, "invalid field number at byte " + std::to_string(at));
    }
    uint64_t varint;
    const uint8_t* data;
    size_t length;
    if (field >= 1 && field <= 5 && field != 4 && type == kVarint) {
      if (!in.Varint(&varint)) return Fail(error, "truncated varint");
      const auto value = static_cast<int32_t>(static_cast<uint32_t>(varint));
      int32_t* targets[] = {&datum.channels, &datum.height, &datum.width, nullptr, &datum.label};
      *targets[field - 1] = value;
    } else if (field == 4 && type == kLengthDelimited) {
      if (!in.LengthDelimited(&data, &length)) {
        return Fail(error, "truncated data field at byte " + std::to_string(at));
      }
      datum.data.assign(reinterpret_cast<const char*>(data), length);
    } else if (field == 6 && type == kFixed32) {
      if (!in.Bytes(4, &data)) return Fail(error, "truncated float_data");
      datum.float_data.push_back(FloatAt(data));
    } else if (field == 6 && type == kLengthDelimited) {
      if (!in.LengthDelimited(&data, &length) || length % 4 != 0) {
        return Fail(error, "bad packed float_data at byte " + std::to_string(at));
      }
      for (size_t i = 0; i < length; i += 4) datum.float_data.push_back(FloatAt(data + i));
    } else if (field == 7 && type == kVarint) {
      if (!in.Varint(&varint)) return Fail(error, "truncated varint");
      datum.encoded = varint != 0;
    } else if (type == kEndGroup) {
      return Fail(error, "end of group without a start at byte " + std::to_string(at));
    } else if (!in.Skip(type, static_cast<uint32_t>(field), 0, error)) {
      if (error != nullptr) *error += " (field " + std::to_string(field) + ")";
      return false;
    }
  }
  *out = std::move(datum);
  return true;
}

std::string SerializeDatum(const Datum& datum) {
  // caffe.proto is proto2 and float_data is not [packed]: each float is its own fixed32 field.
  std::string out;
  out.reserve(datum.data.size() + 5 * datum.float_data.size() + 40);
  PutInt32(1, datum.channels, &out);
  PutInt32(2, datum.height, &out);
  PutInt32(3, datum.width, &out);
  PutTag(4, kLengthDelimited, &out);
  PutVarint(datum.data.size(), &out);
  out += datum.data;
  PutInt32(5, datum.label, &out);
  for (float value : datum.float_data) {
    PutTag(6, kFixed32, &out);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>(bits >> shift));
  }
  PutTag(7, kVarint, &out);
  PutVarint(datum.encoded ? 1 : 0, &out);
  return out;
}

bool CheckRawDatum(const Datum& datum, std::string* error) {
  if (datum.channels <= 0 || datum.height <= 0 || datum.width <= 0) {
    return Fail(error, "sizes must be positive, got " + std::to_string(datum.channels) + "x" +
                           std::to_string(datum.height) + "x" + std::to_string(datum.width));
  }
  const uint64_t expected = static_cast<uint64_t>(datum.channels) *
                            static_cast<uint64_t>(datum.height) *
                            static_cast<uint64_t>(datum.width);
  const bool bytes_match = datum.data.size() == expected;
  const bool floats_match = datum.data.empty() && datum.float_data.size() == expected;
  if (bytes_match || floats_match) return true;
  return Fail(error, std::to_string(datum.channels) + "x" + std::to_string(datum.height) + "x" +
                         std::to_string(datum.width) + " needs " + std::to_string(expected) +
                         " values, record holds " + std::to_string(datum.data.size()) +
                         " bytes and " + std::to_string(datum.float_data.size()) + " floats");
}

}  // namespace crossbow::data
