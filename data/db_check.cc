// crossbow db check: the full scan of a DB, in parallel, which writes or checks its metadata.
#include <exception>
#include <sstream>

#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"
#include "data/epoch_order.h"

namespace crossbow::data {
namespace {

constexpr int64_t kChunk = 8192;  // records read in parallel between in-order summaries

struct Scanned {
  bool parsed = false;
  std::string key, why;
  RecordFacts facts;
};

// Reads and parses records [begin, end) in parallel, each thread through its own transaction.
void ScanChunk(const LmdbReader& reader, int64_t begin, int64_t end, std::vector<Scanned>* out) {
  std::exception_ptr failure;
#pragma omp parallel
  {
    try {
      LmdbReader::Transaction transaction(reader);
#pragma omp for schedule(static)
      for (int64_t i = begin; i < end; ++i) {
        const std::string_view bytes = transaction.Get(i);
        Scanned& record = (*out)[i - begin];
        record.key = transaction.last_key();
        Datum datum;
        record.parsed = ParseDatum(bytes.data(), bytes.size(), &datum, &record.why);
        if (record.parsed) record.facts = FactsOf(datum, static_cast<int64_t>(bytes.size()));
      }
    } catch (...) {
#pragma omp critical
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

DbCheck CheckDb(const std::string& db, bool write_meta, bool progress) {
  DbCheck check;
  check.db = db;
  check.recorded = ReadMeta(db);
  const LmdbReader reader(db, /*use_meta=*/false);
  Progress bar(db + " (check)", reader.size(), progress);
  MetaBuilder builder;
  std::vector<Scanned> chunk(kChunk);
  for (int64_t begin = 0; begin < reader.size(); begin += kChunk) {
    const int64_t end = std::min(reader.size(), begin + kChunk);
    ScanChunk(reader, begin, end, &chunk);
    for (int64_t i = begin; i < end; ++i) {
      const Scanned& record = chunk[i - begin];
      if (record.parsed) {
        builder.Add(record.key, record.facts);
      } else {
        builder.AddUnparsed(record.key);
        check.unparsed.push_back({"key " + record.key, "not a Datum", record.why});
      }
    }
    bar.Advance(end - begin);
  }
  bar.Finish();
  builder.SetClasses(CountClassNames(db));
  check.found = builder.meta();
  check.seconds = bar.seconds();
  if (write_meta) {
    WriteMeta(MetaPath(db), check.found);
    check.written = true;
  }
  return check;
}

bool DbCheck::agrees() const {
  return recorded && MetaSummary(*recorded) == MetaSummary(found) &&
         recorded->key_format == found.key_format;
}

std::string DbCheck::ToString() const {
  std::ostringstream out;
  out << db << ": " << MetaSummary(found) << ", keys " << found.key_format << ", "
      << DescribeLabelOrder(found.records, found.label_runs) << "; read in " << seconds << " s";
  if (!unparsed.empty()) out << "\nnot Datum records: " << DescribeSkips(unparsed);
  if (!recorded) {
    out << "\nno metadata (" << MetaPath(db) << ")";
  } else if (agrees()) {
    out << "\nits metadata agrees";
  } else {
    out << "\nits metadata disagrees: it says " << MetaSummary(*recorded) << ", keys "
        << recorded->key_format;
  }
  if (written) {
    out << "\nwrote " << MetaPath(db);
  } else if (!agrees()) {
    out << " (--write-metadata writes what this scan found)";
  }
  return out.str();
}

}  // namespace crossbow::data
