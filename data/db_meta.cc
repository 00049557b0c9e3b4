#include "data/db_meta.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "crossbow/core/enforce.h"
#include "data/image_decode.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kFormat[] = "crossbow.lmdb_meta.v1";

json StatsJson(const SizeStats& s) {
  return {{"count", s.count}, {"min", s.min}, {"max", s.max}, {"mean", s.mean()}};
}

SizeStats StatsFrom(const json& j) {
  SizeStats s;
  s.count = j.at("count").get<int64_t>();
  s.min = j.at("min").get<int64_t>();
  s.max = j.at("max").get<int64_t>();
  s.sum = j.at("mean").get<double>() * static_cast<double>(s.count);
  return s;
}

}  // namespace

std::string CounterKey(int64_t index) {
  char digits[24];
  std::snprintf(digits, sizeof(digits), "%08lld", static_cast<long long>(index));
  return digits;
}

bool IsCounterKey(std::string_view key, int64_t index) {
  const std::string digits = CounterKey(index);
  return key.substr(0, digits.size()) == digits &&
         (key.size() == digits.size() || key[digits.size()] == '_');
}

void SizeStats::Add(int64_t value) {
  min = count == 0 ? value : std::min(min, value);
  max = count == 0 ? value : std::max(max, value);
  sum += static_cast<double>(value);
  ++count;
}

RecordFacts FactsOf(const Datum& datum, int64_t value_bytes) {
  RecordFacts facts{datum.label,    datum.height,  datum.width,
                    datum.channels, datum.encoded, value_bytes};
  if (datum.encoded && facts.height <= 0 && JpegSize(datum.data, &facts.height, &facts.width)) {
    facts.channels = 0;
  }
  return facts;
}

void MetaBuilder::AddUnparsed(std::string_view key) {
  if (meta_.key_format == "counter" && !IsCounterKey(key, meta_.records)) meta_.key_format = "any";
  ++meta_.records;
}

void MetaBuilder::Add(std::string_view key, const RecordFacts& record) {
  DbMeta& m = meta_;
  AddUnparsed(key);
  m.bytes += record.bytes;
  m.encoded += record.encoded;
  const bool first = m.max_label < m.min_label;
  if (first || record.label != last_label_) ++m.label_runs;
  last_label_ = record.label;
  if (first || record.label < m.min_label) {
    m.min_label = record.label;
    m.min_key = key;
  }
  if (first || record.label > m.max_label) {
    m.max_label = record.label;
    m.max_key = key;
  }
  if (record.height <= 0 || record.width <= 0) return;
  m.height.Add(record.height);
  m.width.Add(record.width);
  if (record.channels > 0) m.channels.Add(record.channels);
}

std::string MetaPath(const std::string& db) {
  return fs::is_directory(db) ? (fs::path(db) / "crossbow_meta.json").string()
                              : db + ".crossbow_meta.json";
}

std::string MetaToJson(const DbMeta& m) {
  json j = {{"format", kFormat},
            {"records", m.records},
            {"labels",
             m.max_label >= m.min_label ? json::array({m.min_label, m.max_label}) : json(nullptr)},
            {"label_keys", json::array({m.min_key, m.max_key})},
            {"key_format", m.key_format},
            {"classes", m.classes},
            {"label_runs", m.label_runs},
            {"encoded", m.encoded},
            {"bytes", m.bytes},
            {"height", StatsJson(m.height)},
            {"width", StatsJson(m.width)},
            {"channels", StatsJson(m.channels)}};
  return j.dump(1) + "\n";
}

void WriteMeta(const std::string& path, const DbMeta& meta) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary);
    out << MetaToJson(meta);
    CROSSBOW_ENFORCE(out.good(), "cannot write ", temporary);
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  CROSSBOW_ENFORCE(!ec, "cannot rename ", temporary, " to ", path, ": ", ec.message());
}

std::optional<DbMeta> ReadMeta(const std::string& db) {
  const std::string path = MetaPath(db);
  std::ifstream in(path);
  if (!in.good()) return std::nullopt;
  try {
    const json j = json::parse(in);
    CROSSBOW_ENFORCE(j.at("format") == kFormat, "format '", j.at("format").dump(), "', not '",
                     kFormat, "'");
    DbMeta m;
    m.records = j.at("records").get<int64_t>();
    if (!j.at("labels").is_null()) {
      m.min_label = j.at("labels").at(0).get<int32_t>();
      m.max_label = j.at("labels").at(1).get<int32_t>();
    }
    m.min_key = j.at("label_keys").at(0).get<std::string>();
    m.max_key = j.at("label_keys").at(1).get<std::string>();
    m.key_format = j.at("key_format").get<std::string>();
    CROSSBOW_ENFORCE(m.key_format == "counter" || m.key_format == "any", "key_format '",
                     m.key_format, "'");
    m.classes = j.at("classes").get<int64_t>();
    m.label_runs = j.value("label_runs", int64_t{-1});
    m.encoded = j.at("encoded").get<int64_t>();
    m.bytes = j.at("bytes").get<int64_t>();
    m.height = StatsFrom(j.at("height"));
    m.width = StatsFrom(j.at("width"));
    m.channels = StatsFrom(j.at("channels"));
    return m;
  } catch (const std::exception& e) {
    CROSSBOW_FAIL(path, " is not the metadata crossbow convert writes (", e.what(),
                  "): remove it, or rewrite it with crossbow db check ", db, " --write-metadata");
  }
}

std::string MetaSummary(const DbMeta& m) {
  std::ostringstream out;
  out << m.records << " records";
  if (m.max_label >= m.min_label) out << ", labels " << m.min_label << ".." << m.max_label;
  if (m.classes > 0) out << ", " << m.classes << " classes";
  if (m.encoded > 0) out << ", " << m.encoded << " encoded";
  if (m.height.count > 0) {
    out << ", " << m.height.min << ".." << m.height.max << " x " << m.width.min << ".."
        << m.width.max << " px";
  }
  out << ", " << m.bytes << " bytes";
  return out.str();
}

int64_t CountClassNames(const std::string& db) {
  std::ifstream names(fs::path(db) / "labels.txt");
  int64_t count = 0;
  for (std::string line; std::getline(names, line);) count += !line.empty();
  return count;
}

}  // namespace crossbow::data
